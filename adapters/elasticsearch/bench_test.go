package elasticsearch

// BenchmarkSidecarHTTP measures the sidecar's own cost per retrieve of
// 100 passages with text: JSON-RPC over the RCP HTTP handler, the Engine,
// and the adapter's request to, and decoding of, an Elasticsearch reply.
// The engine is a fake serving recorded probe responses and one fixed
// ~150 kB search response, so the figure is the sidecar alone.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl/dsltest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// passagePage is a search response of n hits shaped like a passage index.
func passagePage(n int) []byte {
	text := strings.Repeat("Cells respond to low oxygen by stabilising HIF-1α, which alters the expression of hundreds of genes; ", 14)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"took":3,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":%d,"relation":"eq"},"max_score":30.5,"hits":[`, n*10)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		hit, _ := json.Marshal(map[string]any{"_index": "probe-fixture-a", "_id": fmt.Sprint(1000 + i), "_score": 30.5 - float64(i)/7,
			"_source": map[string]any{"title": fmt.Sprintf("Passage %d on hypoxia signalling", i), "text": text, "lang": "en"}})
		b.Write(hit)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

// BenchmarkTranscode measures the CPU-bound part of BenchmarkSidecarHTTP
// on one goroutine, steadier than it on a busy machine: the same reply of
// 100 passages read as the adapter reads it (DecodeSearchSpans,
// decodeSearch) and its candidates written as RCP hits.
func BenchmarkTranscode(b *testing.B) {
	page := passagePage(100)
	a, stop := benchAdapter(b, page)
	defer stop()
	if _, err := a.Probe(context.Background()); err != nil {
		b.Fatal(err)
	}
	st, err := a.probed()
	if err != nil {
		b.Fatal(err)
	}
	p := &adapters.Plan{Stage: adapters.StageLexical, Body: json.RawMessage(`{}`)}
	b.ReportAllocs()
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		sr, err := dsl.DecodeSearchSpans(page, st.sourceFields())
		if err != nil {
			b.Fatal(err)
		}
		c, err := decodeSearch(st, p, sr)
		if err != nil {
			b.Fatal(err)
		}
		if ans, err := dsltest.Answer(c); err != nil || len(ans) < len(page)/2 {
			b.Fatalf("%d bytes (%v)", len(ans), err)
		}
	}
}

// benchAdapter opens the adapter on a fake engine serving recorded probe
// responses and page for every search.
func benchAdapter(b *testing.B, page []byte) (*adapter, func()) {
	probe := fakeRecorded(&testing.T{}, aliasRoutes)
	es := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/_search") {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Elastic-Product", "Elasticsearch")
			_, _ = w.Write(page)
			return
		}
		probe.Config.Handler.ServeHTTP(w, r)
	}))
	cfg := fixtureConfig("probe-fixture-a")
	cfg.PIT, cfg.URLs, cfg.DisableCompression = false, []string{es.URL}, true
	cfg.TitleField, cfg.ContentField = "title", "text"
	a, err := open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		b.Fatal(err)
	}
	return a.(*adapter), func() { es.Close(); probe.Close() }
}

func BenchmarkSidecarHTTP(b *testing.B) {
	page := passagePage(100)
	a, stop := benchAdapter(b, page)
	defer stop()
	ctx := context.Background()
	eng, err := retrieval.NewEngine(ctx, a, retrieval.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rcpSrv := httptest.NewServer(server.New(eng, server.Options{}).Handler())
	defer rcpSrv.Close()
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"hypoxia signalling","k":100,"mode":"sparse"}}`)
	client := rcpSrv.Client()
	b.ReportAllocs()
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		res, err := client.Post(rcpSrv.URL+"/rcp/retrieve", "application/json", bytes.NewReader(frame))
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || n < int64(len(page))/2 {
			b.Fatalf("HTTP %d, %d bytes", res.StatusCode, n)
		}
	}
}
