package statestore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/internal/session"
	"github.com/rcp-sidecar/rcp-sidecar/internal/statestore"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

const benchKey = "bench-key-0123456789"

// benchHandler is the RCP server over a memory engine of 200 documents,
// behind an access guard with one rate-limited key and with sessions on;
// shared nil is the in-process store of a single replica.
func benchHandler(b *testing.B, st *statestore.Store) http.Handler {
	mem := memory.New(memory.Options{})
	for i := range 200 {
		mem.Add(adapters.Document{ID: fmt.Sprintf("d%03d", i), Text: fmt.Sprintf("solar panel report %d on grid storage %d", i, i%7)})
	}
	var shared session.Shared
	var lim access.Limiter
	if st != nil {
		shared, lim = st, st
	}
	eng, err := retrieval.NewEngine(context.Background(), mem, retrieval.Options{Name: "bench", Version: "0",
		Sessions: session.NewTiered(session.New(session.Options{}), shared, "bench"),
		Policy:   capability.Policy{MaxK: 50, DefaultCandidateK: 50, Session: &capability.SessionFacts{Dedup: true, TTLSeconds: 1800}},
		Caller:   func(ctx context.Context) string { return access.FromContext(ctx).ID() }})
	if err != nil {
		b.Fatal(err)
	}
	// The rate is far above what the benchmark sends: every request pays
	// the limiter's round trip and is admitted.
	g, err := access.New(access.Options{Keys: []access.Key{{ID: "bench", Digest: sha256.Sum256([]byte(benchKey)), RPS: 1e6, Burst: 1e6}},
		DefaultEngine: "bench", Limiter: lim})
	if err != nil {
		b.Fatal(err)
	}
	be, err := g.Backend("bench", eng)
	if err != nil {
		b.Fatal(err)
	}
	h := g.Middleware(server.New(be, server.Options{Authorize: access.AuthorizeMethod}).Handler())
	if st != nil {
		h = statestore.Middleware(h)
	}
	return h
}

// BenchmarkRetrieveState measures one retrieve with a sessionId (the
// store's Seen and Record) by a rate-limited key (its Allow) through the
// access guard and the RCP server, in process (no network but the
// store's): with the in-process store of one replica, and with the
// shared store on a loopback Valkey/Redis server. It reports the p50 and
// p99 latency; the difference is what the shared store adds.
//
//	go test -run '^$' -bench RetrieveState -benchtime 3000x ./internal/statestore
func BenchmarkRetrieveState(b *testing.B) {
	for _, name := range []string{"in-process", "shared"} {
		b.Run(name, func(b *testing.B) {
			var st *statestore.Store
			if name == "shared" {
				url := itest.RequireEnv(b, "RCP_VALKEY_URL", "run integration/valkey/start.sh and source integration/.work/valkey.env")
				var err error
				st, err = statestore.Open(statestore.Options{URL: url, Timeout: time.Second, Prefix: fmt.Sprintf("rcpbench:%d:", time.Now().UnixNano())})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
			}
			h := benchHandler(b, st)
			bodies := make([][]byte, 64)
			for i := range bodies {
				bodies[i], _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "retrieve",
					"params": map[string]any{"query": "solar grid storage", "k": 5, "sessionId": fmt.Sprint("s", i)}})
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				req := httptest.NewRequest(http.MethodPost, "/rcp/retrieve", bytes.NewReader(bodies[i%len(bodies)]))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-API-Key", benchKey)
				rec := httptest.NewRecorder()
				start := time.Now()
				h.ServeHTTP(rec, req)
				lat = append(lat, time.Since(start))
				if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"error"`)) || bytes.Contains(rec.Body.Bytes(), []byte("did not answer")) {
					b.Fatalf("request %d: HTTP %d %s", i, rec.Code, rec.Body.Bytes())
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
