package retrieval_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

func TestConformanceLevel(t *testing.T) {
	full, _ := newEngine(t, setup{emb: true})
	sparse, _ := newEngine(t, setup{})
	if got := full.Conformance(); got != "L2" {
		t.Errorf("hybrid+filter+citations+pagination+streaming+log engine: %s, want L2", got)
	}
	if got := sparse.Conformance(); got != "L2" {
		t.Errorf("sparse-only engine with filter, citations, pagination, streaming, log: %s, want L2", got)
	}
	if len(full.Explain()) == 0 || full.Evidence().Engine != "memory" {
		t.Error("explain/evidence empty")
	}
}

func TestRetrieveGating(t *testing.T) {
	full, _ := newEngine(t, setup{emb: true})
	sparse, _ := newEngine(t, setup{policy: capability.Policy{Operators: []filterlang.Op{filterlang.OpEq, filterlang.OpIn}}})
	tests := []struct {
		name          string
		sparseOnly    bool
		req           string
		code          rcp.Code
		option, field string
	}{
		{name: "missing query", req: `{"k":3}`, code: rcp.CodeInvalidParams, field: "query"},
		{name: "empty block list", req: `{"query":[],"k":3}`, code: rcp.CodeInvalidParams, field: "query"},
		{name: "untyped block", req: `{"query":{"text":"solar"},"k":3}`, code: rcp.CodeInvalidParams, field: "query"},
		{name: "untyped block in list", req: `{"query":[{"type":"text","text":"a"},{}],"k":3}`, code: rcp.CodeInvalidParams, field: "query[1]"},
		{name: "image block", req: `{"query":{"type":"image","mimeType":"image/png","data":"AA=="},"k":3}`,
			code: rcp.CodeOptionUnsupported, option: "image"},
		{name: "mode not advertised", sparseOnly: true, req: `{"query":"solar","k":3,"mode":"dense"}`,
			code: rcp.CodeOptionUnsupported, option: "dense"},
		{name: "hybrid not advertised", sparseOnly: true, req: `{"query":"solar","k":3,"mode":"hybrid"}`,
			code: rcp.CodeOptionUnsupported, option: "hybrid"},
		{name: "rerank", req: `{"query":"solar","k":3,"rerank":{"method":"cross-encoder"}}`,
			code: rcp.CodeOptionUnsupported, option: "cross-encoder"},
		{name: "rewrite", req: `{"query":"solar","k":3,"rewrite":"hyde"}`, code: rcp.CodeOptionUnsupported, option: "hyde"},
		{name: "unit", req: `{"query":"solar","k":3,"unit":"community"}`, code: rcp.CodeOptionUnsupported, option: "community"},
		{name: "modality", req: `{"query":"solar","k":3,"modality":"image"}`, code: rcp.CodeOptionUnsupported, option: "image"},
		{name: "unknown encoding", sparseOnly: true, req: `{"query":"solar","k":3,"encoding":"f16-base64"}`,
			code: rcp.CodeOptionUnsupported, option: "f16-base64"},
		{name: "mmr without vectors", sparseOnly: true, req: `{"query":"solar","k":3,"mmr":{"lambda":0.5}}`,
			code: rcp.CodeOptionUnsupported, option: "mmr"},
		{name: "recency", req: `{"query":"solar","k":3,"recency":{"field":"year","halfLifeDays":3}}`,
			code: rcp.CodeOptionUnsupported, option: "recency"},
		{name: "indexVersion", req: `{"query":"solar","k":3,"indexVersion":"v1"}`, code: rcp.CodeOptionUnsupported, option: "indexVersion"},
		{name: "level", req: `{"query":"solar","k":3,"level":2}`, code: rcp.CodeOptionUnsupported, option: "level"},
		{name: "filter unknown field", req: `{"query":"solar","k":3,"filter":{"field":"nosuch","op":"eq","value":"x"}}`,
			code: rcp.CodeInvalidParams, field: "filter.nosuch"},
		{name: "filter op narrowed by policy", sparseOnly: true,
			req:  `{"query":"solar","k":3,"filter":{"field":"year","op":"gt","value":2020}}`,
			code: rcp.CodeOptionUnsupported, option: "gt"},
		{name: "filter empty and", req: `{"query":"solar","k":3,"filter":{"and":[]}}`, code: rcp.CodeInvalidParams, field: "filter"},
		{name: "tokenBudget zero", req: `{"query":"solar","k":3,"tokenBudget":0}`, code: rcp.CodeInvalidParams, field: "tokenBudget"},
		{name: "lambda out of range", req: `{"query":"solar","k":3,"mmr":{"lambda":2}}`, code: rcp.CodeInvalidParams, field: "mmr.lambda"},
		{name: "alpha out of range", req: `{"query":"solar","k":3,"mode":"hybrid","fusion":{"method":"convex","alpha":2}}`,
			code: rcp.CodeInvalidParams, field: "fusion.alpha"},
		{name: "rrfK zero", req: `{"query":"solar","k":3,"mode":"hybrid","fusion":{"rrfK":0}}`,
			code: rcp.CodeInvalidParams, field: "fusion.rrfK"},
		{name: "negative k", req: `{"query":"solar","k":-1}`, code: rcp.CodeInvalidParams, field: "k"},
		{name: "garbage cursor", req: `{"query":"solar","k":3,"cursor":"not-a-cursor"}`, code: rcp.CodeInvalidParams, field: "cursor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := full
			if tc.sparseOnly {
				e = sparse
			}
			_, err := e.Retrieve(context.Background(), params(t, tc.req))
			wantErr(t, err, tc.code, tc.option, tc.field)
		})
	}
}

func TestStrictFalseDegrades(t *testing.T) {
	sparse, _ := newEngine(t, setup{})
	tests := []struct{ req, note string }{
		{`{"query":"solar","k":3,"mode":"dense","strict":false}`, "mode sparse used instead of dense"},
		{`{"query":"solar","k":3,"rerank":{"method":"llm"},"strict":false}`, "rerank is not advertised"},
		{`{"query":"solar","k":3,"unit":"page","strict":false}`, "strict:false"},
		{`{"query":"solar","k":3,"mmr":{},"strict":false}`, "mmr is not advertised"},
		{`{"query":"solar","k":3,"encoding":"f16-base64","strict":false}`, "vectors encoded as json"},
		{`{"query":"solar","k":3,"encoding":"f32-base64"}`, "f32-base64 applies to embed results only"},
	}
	for _, tc := range tests {
		res := retrieve(t, sparse, tc.req)
		if len(res.Hits) == 0 || !hasNote(res.Usage, tc.note) {
			t.Errorf("%s: hits %d notes %v, want note %q", tc.req, len(res.Hits), res.Usage.Notes, tc.note)
		}
	}
	// A filter is never dropped, even when not strict.
	_, err := sparse.Retrieve(context.Background(), params(t, `{"query":"solar","k":3,"strict":false,"filter":{"field":"nosuch","op":"eq","value":1}}`))
	wantErr(t, err, rcp.CodeInvalidParams, "", "filter.nosuch")
}

func TestFusionGating(t *testing.T) {
	dot, _ := newEngine(t, setup{emb: true, sim: capability.SimDot})
	if f := dot.Capabilities().Retrieve.Fusion; len(f) != 2 {
		t.Fatalf("dot store fusion %v, want rrf+weighted only", f)
	}
	_, err := dot.Retrieve(context.Background(), params(t, `{"query":"solar","k":3,"mode":"hybrid","fusion":{"method":"convex"}}`))
	wantErr(t, err, rcp.CodeOptionUnsupported, "convex", "")
	res := retrieve(t, dot, `{"query":"solar","k":3,"mode":"hybrid","strict":false,"fusion":{"method":"convex"}}`)
	if !hasNote(res.Usage, "fusion rrf used instead of convex") || !hasNote(res.Usage, "with rrf") {
		t.Errorf("degraded convex notes %v", res.Usage.Notes)
	}
	cos, _ := newEngine(t, setup{emb: true})
	res = retrieve(t, cos, `{"query":"solar","k":3,"mode":"hybrid","fusion":{"method":"convex","alpha":0.7}}`)
	if !hasNote(res.Usage, "convex fusion (alpha=0.7") {
		t.Errorf("convex notes %v", res.Usage.Notes)
	}
}

// counting is a FAKE adapter wrapper that counts the stage plans and
// searches the Engine asks for.
type counting struct {
	adapters.Adapter
	mu             sync.Mutex
	plans, queries int
}

func (c *counting) Plan(req *adapters.SearchRequest) (*adapters.Plan, error) {
	c.mu.Lock()
	c.plans++
	c.mu.Unlock()
	return c.Adapter.Plan(req)
}

func (c *counting) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	c.mu.Lock()
	c.queries++
	c.mu.Unlock()
	return c.Adapter.Search(ctx, p)
}

// TestMaxQueryChars: a query over policy.MaxQueryChars characters (code
// points, not bytes) in one block or in all blocks joined by spaces is
// -32602 on "query" or "query[i]" in every mode, and neither the engine
// nor the embedder is called; at the limit it is served.
func TestMaxQueryChars(t *testing.T) {
	const limit = 16
	emb := &fakeEmbedder{dim: dim}
	backend := &counting{Adapter: newStore(emb, false, "")}
	e, err := retrieval.NewEngine(context.Background(), backend, retrieval.Options{Name: "test", Version: "0",
		Policy: capability.Policy{MaxQueryChars: limit}, Embedder: emb, CursorKeys: [][]byte{[]byte("k")}})
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Repeat("é", limit) // 16 characters, 32 bytes
	over := strings.Repeat("a", limit+1)
	block := func(s string) string { return `{"type":"text","text":"` + s + `"}` }
	tests := []struct {
		name, query string
		field       string // "" when served
	}{
		{"at the limit in characters", `"` + at + `"`, ""},
		{"one character over", `"` + over + `"`, "query"},
		{"single block over", block(over), "query"},
		{"second block over", `[` + block("solar") + `,` + block(over) + `]`, "query[1]"},
		{"blocks over together", `[` + block(strings.Repeat("b", 8)) + `,` + block(strings.Repeat("c", 8)) + `]`, "query"}, // 8+1+8
		{"blocks at the limit together", `[` + block(strings.Repeat("b", 8)) + `,` + block(strings.Repeat("c", 7)) + `]`, ""},
	}
	for _, mode := range []string{"sparse", "dense", "hybrid"} {
		for _, tc := range tests {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				plans, embeds := backend.count(), emb.count()
				_, err := e.Retrieve(context.Background(), params(t, `{"query":`+tc.query+`,"mode":"`+mode+`","k":3}`))
				if tc.field == "" {
					if err != nil {
						t.Fatalf("served query: %v", err)
					}
					if backend.count() == plans || (mode != "sparse" && emb.count() == embeds) {
						t.Error("served query reached neither the engine nor the embedder: the counters count nothing")
					}
					return
				}
				wantErr(t, err, rcp.CodeInvalidParams, "", tc.field)
				if backend.count() != plans || emb.count() != embeds {
					t.Errorf("rejected query reached the engine (%d plans) or the embedder (%d calls)", backend.count()-plans, emb.count()-embeds)
				}
			})
		}
	}
}

// TestMaxQueryCharsDefault: without a policy value the limit is 8192
// characters.
func TestMaxQueryCharsDefault(t *testing.T) {
	e, _ := newEngine(t, setup{})
	if _, err := e.Retrieve(context.Background(), params(t, `{"query":"`+strings.Repeat("ü", capability.DefaultMaxQueryChars)+`","k":1}`)); err != nil {
		t.Fatalf("query of %d characters: %v", capability.DefaultMaxQueryChars, err)
	}
	_, err := e.Retrieve(context.Background(), params(t, `{"query":"`+strings.Repeat("x", capability.DefaultMaxQueryChars+1)+`","k":1}`))
	wantErr(t, err, rcp.CodeInvalidParams, "", "query")
}

func (c *counting) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.plans + c.queries
}

func (f *fakeEmbedder) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// refusingEngine is a FAKE of the resilient decorator's open breaker: a counted
// adapter whose Refusing returns err (nil: admitting).
type refusingEngine struct {
	*counting
	err error
}

func (r *refusingEngine) Refusing() error { return r.err }

// TestRefusedEngineSkipsEmbedding: while the adapter refuses its engine
// calls (adapters.Refuser: an open breaker), a dense or hybrid retrieve
// answers the refusal without embedding the query; once it admits again,
// the query is embedded and served.
func TestRefusedEngineSkipsEmbedding(t *testing.T) {
	emb := &fakeEmbedder{dim: dim}
	open := rcp.Retryable(rcp.CodeBackendUnavailable, 1500, "circuit open")
	backend := &refusingEngine{counting: &counting{Adapter: newStore(emb, false, "")}, err: open}
	e, err := retrieval.NewEngine(context.Background(), backend, retrieval.Options{Name: "test", Version: "0",
		Embedder: emb, CursorKeys: [][]byte{[]byte("k")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"dense", "hybrid"} {
		t.Run(mode, func(t *testing.T) {
			backend.err = open
			embeds := emb.count()
			_, err := e.Retrieve(context.Background(), params(t, `{"query":"solar","mode":"`+mode+`","k":3}`))
			wantErr(t, err, rcp.CodeBackendUnavailable, "", "")
			if emb.count() != embeds {
				t.Errorf("a refused retrieve embedded %d queries, want none", emb.count()-embeds)
			}
			backend.err = nil
			if _, err := e.Retrieve(context.Background(), params(t, `{"query":"solar","mode":"`+mode+`","k":3}`)); err != nil {
				t.Fatalf("admitted retrieve: %v", err)
			}
			if emb.count() == embeds {
				t.Error("an admitted retrieve embedded nothing: the counter counts nothing")
			}
		})
	}
}
