package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// qdrantAddr is the gRPC address of a Qdrant (or of integration/qdrant's
// front over Qdrant Edge); the test skips without one unless engines are
// required.
func qdrantAddr(t *testing.T) string {
	t.Helper()
	addr := os.Getenv("RCP_QDRANT_ADDR")
	if addr == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatalf("RCP_REQUIRE_ENGINES is set but RCP_QDRANT_ADDR is not (run integration/qdrant/start.sh)")
		}
		t.Skip("RCP_QDRANT_ADDR not set")
	}
	return addr
}

// queryRecorder keeps the gRPC messages of one method that pass through a
// handler; a unary call's request body is one length-prefixed message.
type queryRecorder struct {
	method string
	mu     sync.Mutex
	bodies [][]byte
}

func (r *queryRecorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == r.method {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			r.mu.Lock()
			r.bodies = append(r.bodies, body)
			r.mu.Unlock()
		}
		h.ServeHTTP(w, req)
	})
}

// take returns and forgets the recorded bodies.
func (r *queryRecorder) take() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.bodies
	r.bodies = nil
	return out
}

// decodeQuery reads one uncompressed gRPC frame holding a QueryPoints.
func decodeQuery(t *testing.T, body []byte) *qdrantgo.QueryPoints {
	t.Helper()
	if len(body) < 5 || body[0] != 0 {
		t.Fatalf("not one uncompressed gRPC frame: % x", body[:min(len(body), 8)])
	}
	n := binary.BigEndian.Uint32(body[1:5])
	if int(n) != len(body)-5 {
		t.Fatalf("frame says %d bytes, body holds %d", n, len(body)-5)
	}
	var qp qdrantgo.QueryPoints
	if err := proto.Unmarshal(body[5:], &qp); err != nil {
		t.Fatal(err)
	}
	return &qp
}

// letterEmbedder is a test embedder that maps a text to its counts of
// a, e, i and o (plus one, so no vector is zero), deterministically: enough
// for a cosine collection whose query vectors the test must know.
type letterEmbedder struct{}

func (letterEmbedder) Embed(_ context.Context, texts []string, _ string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := []float32{1, 1, 1, 1}
		for _, c := range strings.ToLower(s) {
			if j := strings.IndexRune("aeio", c); j >= 0 {
				v[j]++
			}
		}
		out[i] = v
	}
	return out, nil
}
func (letterEmbedder) Dimension() int   { return 4 }
func (letterEmbedder) Identity() string { return "test-letters-4" }

// TestQdrantPathsMatchTheAdapter drives the Qdrant paths against a real
// engine. The in-process Engine (the sidecar's retrieval pipeline over the
// Qdrant adapter, configured as the benchmark configures `serve`) reaches
// the engine through the h2c proxy wrapped in a recorder, so the test
// sees the QueryPoints the adapter really sends and checks that the
// benchmark's direct request is that message, field for field. It then
// checks that the direct and proxy paths return the Engine's ids in its
// order, and that an engine error passes the proxy with the status the
// engine gives directly (a trailer of HTTP/2).
func TestQdrantPathsMatchTheAdapter(t *testing.T) {
	addr := qdrantAddr(t)
	t.Setenv("RCP_CACHE", t.TempDir()) // the kit's vector cache: not the user's
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	rec := &queryRecorder{method: "/qdrant.Points/Query"}
	hs, err := newProxy("http://"+addr, true)
	if err != nil {
		t.Fatal(err)
	}
	hs.Handler = rec.wrap(hs.Handler)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	proxyAddr := ln.Addr().String()

	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	coll := "hop-test-" + hex.EncodeToString(suffix)
	t.Cleanup(func() { _ = dropQdrant(context.Background(), addr, coll) })
	ds := &beir.Dataset{
		Docs: []beir.Doc{
			{ID: "d1", Title: "Solar wind", Text: "The solar wind carries charged particles past the earth."},
			{ID: "d2", Title: "Protein folding", Text: "Proteins fold into shapes that decide their function."},
			{ID: "d3", Title: "Wind turbines", Text: "Turbines turn wind into electric power on land and at sea."},
			{ID: "d4", Title: "Earth's magnetic field", Text: "The magnetic field of the earth deflects the solar wind."},
			{ID: "d5", Title: "Enzymes", Text: "Enzymes are proteins that speed up reactions in cells."},
		},
		Queries: []beir.Query{{ID: "q1", Text: "solar wind and the earth"}, {ID: "q2", Text: "protein function"}},
	}
	emb := letterEmbedder{}
	setup, err := beir.Prepare(ctx, beir.Options{Engine: beir.QdrantName, URL: proxyAddr, Index: coll, K: 10,
		Dataset: ds, Embedder: emb, EmbedVariant: "test", Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	nat, err := newQdrantNative(coll, addr, proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer nat.close()

	// The points each query finds, worked out outside the code under test.
	// BM25 finds the documents sharing a stemmed non-stop word with the
	// query ("solar", "wind", "earth"; "protein(s)", "function"), and every
	// sparse k below asks for at least that many. Dense asks for k+1 = 4
	// of the 5 points: the nearest by the cosine of the letter counts of
	// title + " " + text, computed by hand (q1: d1 .991, d3 .930, d4 .905,
	// d5 .862, d2 .839; q2: d2 .989, d3 .920, d4 .792, d1 .791, d5 .770).
	matches := map[string][][]string{
		"sparse": {{"d1", "d3", "d4"}, {"d2", "d5"}},
		"dense":  {{"d1", "d3", "d4", "d5"}, {"d2", "d3", "d4", "d1"}},
	}
	var vecs [][]float32
	for _, q := range ds.Queries {
		v, _ := emb.Embed(ctx, []string{q.Text}, "query")
		vecs = append(vecs, v[0])
	}
	for _, tc := range []struct {
		mode string
		k    int
	}{{"sparse", 2}, {"sparse", 10}, {"dense", 3}} {
		call, err := nat.requests(tc.mode, tc.k, ds.Queries, vecs)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range ds.Queries {
			k := int64(tc.k)
			rec.take()
			res, err := setup.Engine().Retrieve(ctx, &rcp.RetrieveParams{Query: rcp.TextQuery(q.Text), Mode: rcp.Mode(tc.mode), K: &k, CandidateK: &k})
			if err != nil {
				t.Fatalf("%s k=%d %q: engine: %v", tc.mode, tc.k, q.Text, err)
			}
			sent := rec.take()
			if len(sent) != 1 {
				t.Fatalf("%s k=%d %q: the adapter sent %d Query calls, want 1", tc.mode, tc.k, q.Text, len(sent))
			}
			got, want := decodeQuery(t, sent[0]), qdrantRequest(coll, tc.mode, q.Text, vecs[i], tc.k)
			if !proto.Equal(got, want) {
				t.Errorf("%s k=%d %q: the adapter sent\n%s\nthe benchmark sends\n%s", tc.mode, tc.k, q.Text, protojson.Format(got), protojson.Format(want))
			}
			var engineIDs []string
			for _, h := range res.Hits {
				engineIDs = append(engineIDs, h.ID)
			}
			if len(engineIDs) == 0 {
				t.Fatalf("%s k=%d %q: no hits", tc.mode, tc.k, q.Text)
			}
			for _, path := range []string{pathDirect, pathProxy} {
				ids, err := call(ctx, path, i, true)
				if err != nil {
					t.Fatalf("%s %s k=%d %q: %v", path, tc.mode, tc.k, q.Text, err)
				}
				if want := matches[tc.mode][i]; !sameSet(ids, want) {
					t.Errorf("%s %s k=%d %q: points %v, want %v", path, tc.mode, tc.k, q.Text, ids, want)
				}
				if ids = ids[:min(len(ids), tc.k)]; !slices.Equal(ids, engineIDs) {
					t.Errorf("%s %s k=%d %q: ids %v, the Engine's %v", path, tc.mode, tc.k, q.Text, ids, engineIDs)
				}
			}
		}
	}

	// An engine error reaches the client through the proxy as it does
	// directly: the status travels in HTTP/2 trailers (or a trailers-only
	// answer), which the proxy must forward.
	missing := qdrantRequest(coll+"-missing", "sparse", "wind", nil, 3)
	var codes []string
	for _, a := range []string{addr, proxyAddr} {
		c, err := qdrantConnect(a)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Query(ctx, missing)
		_ = c.Close()
		if err == nil {
			t.Fatalf("%s: query on a missing collection succeeded", a)
		}
		codes = append(codes, status.Code(err).String())
	}
	if codes[0] != codes[1] || codes[0] == "OK" || codes[0] == "Unknown" {
		t.Errorf("missing collection: direct status %s, through the proxy %s", codes[0], codes[1])
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
