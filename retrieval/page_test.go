package retrieval_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// contAdapter wraps the memory store with the optional features an
// engine adapter may prove: units, native recency, snapshots and
// continuation paging (search_after over its own sort values = ids).
type contAdapter struct {
	adapters.Adapter
	// lexicalRecency proves recency for lexical stages only.
	lexicalRecency bool
	mu             sync.Mutex
	reqs           []adapters.SearchRequest
	released       []string
}

func (c *contAdapter) Probe(ctx context.Context) (*capability.Evidence, error) {
	ev, err := c.Adapter.Probe(ctx)
	if err != nil {
		return nil, err
	}
	ev.Units, ev.NativeRecency, ev.Snapshots = []string{"chunk", "document"}, true, true
	ev.RecencyLexicalOnly = c.lexicalRecency
	ev.FilterFields = append(ev.FilterFields, capability.FilterField{Name: "published", Type: filterlang.TypeDate})
	return ev, nil
}

func (c *contAdapter) Plan(req *adapters.SearchRequest) (*adapters.Plan, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, *req)
	c.mu.Unlock()
	inner := *req
	inner.From = 0 // the fake continues after After itself
	p, err := c.Adapter.Plan(&inner)
	if err == nil {
		b, _ := json.Marshal(contReq{req.After, req.Resume, req.Paginate})
		p.Target = string(b) // carried to Search
	}
	return p, err
}

// contReq is what the fake's Search needs from the request.
type contReq struct {
	After    json.RawMessage `json:",omitempty"`
	Resume   json.RawMessage `json:",omitempty"`
	Paginate bool
}

func (c *contAdapter) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	var req contReq
	_ = json.Unmarshal([]byte(p.Target), &req)
	cands, err := c.Adapter.Search(ctx, p)
	if err != nil {
		return nil, err
	}
	hits := cands.Hits[:0:0]
	var after string
	_ = json.Unmarshal(req.After, &after)
	for _, h := range cands.Hits {
		if after != "" && h.ID <= after {
			continue
		}
		h.Sort, _ = json.Marshal(h.ID)
		h.DocID, _ = h.Meta["lang"].(string)
		hits = append(hits, h)
	}
	cands.Hits = hits
	if req.Paginate || req.Resume != nil {
		cands.Next, cands.IndexVersion = json.RawMessage(`"pit"`), "snap"
	}
	return cands, nil
}

func (c *contAdapter) Release(_ context.Context, next json.RawMessage) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.released = append(c.released, string(next))
	return nil
}

func (c *contAdapter) last() adapters.SearchRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reqs[len(c.reqs)-1]
}

func newContEngine(t *testing.T) (*retrieval.Engine, *contAdapter) {
	return newContEngineWith(t, false)
}

func newContEngineWith(t *testing.T, lexicalRecency bool) (*retrieval.Engine, *contAdapter) {
	var ca *contAdapter
	e, _ := newEngine(t, setup{emb: true, wrap: func(a adapters.Adapter) adapters.Adapter {
		ca = &contAdapter{Adapter: a, lexicalRecency: lexicalRecency}
		return ca
	}})
	return e, ca
}

// TestContinuationPaging: a sparse request pages by the adapter's
// continuation (Paginate on page 1, Resume+After after), the sealed
// indexVersion is echoed while pages remain, and the last page releases it.
func TestContinuationPaging(t *testing.T) {
	e, ca := newContEngine(t)
	// ids sorted ascending is the fake's engine order for this check.
	q := `{"query":"electricity","mode":"sparse","k":2`
	res := retrieve(t, e, q+`}`)
	if first := ca.last(); !first.Paginate || first.Resume != nil {
		t.Fatalf("page 1 request %+v", first)
	}
	var seen []string
	for page := 1; ; page++ {
		seen = append(seen, hitIDs(res.Hits)...)
		if res.NextCursor == "" {
			break
		}
		if res.IndexVersion == "" {
			t.Errorf("page %d: no indexVersion while pages remain", page)
		}
		res = retrieve(t, e, q+`,"cursor":"`+res.NextCursor+`"}`)
		r := ca.last()
		if string(r.Resume) != `"pit"` || len(r.After) == 0 || r.From != 2*page || r.K != 3 {
			t.Fatalf("page %d request: resume %s after %s from %d k %d", page+1, r.Resume, r.After, r.From, r.K)
		}
	}
	if len(seen) < 3 || len(slices.Compact(slices.Clone(seen))) != len(seen) {
		t.Errorf("pages %v: want >2 distinct hits", seen)
	}
	if res.IndexVersion != "" || !slices.Equal(ca.released, []string{`"pit"`}) {
		t.Errorf("last page: indexVersion %q released %v", res.IndexVersion, ca.released)
	}
}

// TestContinuationNotForFusedOrMMR: hybrid and MMR pages keep offsets.
func TestContinuationNotForFusedOrMMR(t *testing.T) {
	e, ca := newContEngine(t)
	for _, q := range []string{`{"query":"solar","mode":"hybrid","k":2}`, `{"query":"solar","mode":"dense","k":2,"mmr":{}}`} {
		res := retrieve(t, e, q)
		if ca.last().Paginate || res.IndexVersion != "" || res.NextCursor == "" {
			t.Errorf("%s: paginate %t indexVersion %q next %q", q, ca.last().Paginate, res.IndexVersion, res.NextCursor)
		}
	}
}

func TestPinnedIndexVersion(t *testing.T) {
	e, ca := newContEngine(t)
	res := retrieve(t, e, `{"query":"electricity","mode":"sparse","k":1}`)
	if res.IndexVersion == "" {
		t.Fatal("no indexVersion")
	}
	retrieve(t, e, `{"query":"wind","mode":"sparse","k":1,"indexVersion":"`+res.IndexVersion+`"}`)
	if got := ca.last().IndexVersion; got != "snap" {
		t.Errorf("pinned %q, want the adapter's snapshot", got)
	}
	_, err := e.Retrieve(context.Background(), params(t, `{"query":"wind","indexVersion":"forged"}`))
	wantErr(t, err, rcp.CodeInvalidParams, "", "indexVersion")
}

func TestRecencyGate(t *testing.T) {
	e, ca := newContEngine(t)
	for _, tc := range []struct{ js, field string }{
		{`{"query":"solar","recency":{"field":"year","halfLifeDays":30}}`, "recency.field"},
		{`{"query":"solar","recency":{"field":"nope","halfLifeDays":30}}`, "recency.field"},
		{`{"query":"solar","recency":{"field":"published","halfLifeDays":0}}`, "recency.halfLifeDays"},
	} {
		_, err := e.Retrieve(context.Background(), params(t, tc.js))
		wantErr(t, err, rcp.CodeInvalidParams, "", tc.field)
	}
	retrieve(t, e, `{"query":"solar","mode":"sparse","k":1,"recency":{"field":"published","halfLifeDays":7}}`)
	if r := ca.last().Recency; r == nil || r.Field != "published" || r.HalfLifeDays != 7 {
		t.Errorf("recency passed as %+v", r)
	}
	plain, _ := newEngine(t, setup{})
	_, err := plain.Retrieve(context.Background(), params(t, `{"query":"solar","recency":{"field":"year","halfLifeDays":1}}`))
	wantErr(t, err, rcp.CodeOptionUnsupported, "recency", "")
}

// TestRecencyLexicalOnly: an adapter whose recency applies to lexical
// stages only gets -32005 for dense and hybrid under strict, and with
// strict:false runs dense without it (noted) and hybrid with it on the
// sparse list only (noted).
func TestRecencyLexicalOnly(t *testing.T) {
	e, ca := newContEngineWith(t, true)
	const rec = `"recency":{"field":"published","halfLifeDays":7}`
	for _, mode := range []string{"dense", "hybrid"} {
		_, err := e.Retrieve(context.Background(), params(t, `{"query":"solar","mode":"`+mode+`",`+rec+`}`))
		wantErr(t, err, rcp.CodeOptionUnsupported, "recency", "")
	}
	for _, tc := range []struct{ mode, note string }{
		{"dense", "ignored (strict:false)"},
		{"hybrid", "applied to the sparse list only (strict:false)"},
	} {
		ca.mu.Lock()
		ca.reqs = nil
		ca.mu.Unlock()
		res := retrieve(t, e, `{"query":"solar","mode":"`+tc.mode+`","strict":false,"k":2,`+rec+`}`)
		if res.Usage == nil || !slices.ContainsFunc(res.Usage.Notes, func(n string) bool { return strings.Contains(n, tc.note) }) {
			t.Errorf("%s: notes %v, want one saying %q", tc.mode, res.Usage, tc.note)
		}
		ca.mu.Lock()
		for _, req := range ca.reqs {
			if got, want := req.Recency != nil, req.Stage == adapters.StageLexical; got != want {
				t.Errorf("%s: %s stage got recency %v", tc.mode, req.Stage, req.Recency)
			}
		}
		if len(ca.reqs) == 0 {
			t.Errorf("%s: no stage ran", tc.mode)
		}
		ca.mu.Unlock()
	}
	retrieve(t, e, `{"query":"solar","mode":"sparse","k":1,`+rec+`}`)
	if ca.last().Recency == nil {
		t.Error("sparse: recency not passed")
	}
}

// TestUnitDocument: the unit is advertised from evidence, passed to the
// adapter, echoed by hits, and fused lists keep one hit per document.
func TestUnitDocument(t *testing.T) {
	e, ca := newContEngine(t)
	if u := e.Capabilities().Retrieve.Units; !slices.Equal(u, []string{"chunk", "document"}) {
		t.Fatalf("units %v", u)
	}
	res := retrieve(t, e, `{"query":"solar electricity","mode":"hybrid","unit":"document","k":8}`)
	if ca.last().Unit != "document" {
		t.Errorf("unit not passed: %+v", ca.last())
	}
	langs := map[string]bool{}
	for _, h := range res.Hits {
		l, _ := h.Meta["lang"].(string)
		if h.Unit != "document" || langs[l] {
			t.Errorf("hit %s unit %q lang %s repeated=%t", h.ID, h.Unit, l, langs[l])
		}
		langs[l] = true
	}
	if chunk := retrieve(t, e, `{"query":"solar","k":1}`); chunk.Hits[0].Unit != "chunk" {
		t.Errorf("default unit %q", chunk.Hits[0].Unit)
	}
	plain, _ := newEngine(t, setup{})
	_, err := plain.Retrieve(context.Background(), params(t, `{"query":"solar","unit":"document"}`))
	wantErr(t, err, rcp.CodeOptionUnsupported, "document", "")
}

// hideRelease exposes only the Adapter methods of what it wraps: an
// adapter that returns continuations but keeps nothing to release.
type hideRelease struct{ adapters.Adapter }

// lastPage pages q through e to its end and returns the last result.
func lastPage(t *testing.T, e *retrieval.Engine, q string) *rcp.RetrieveResult {
	t.Helper()
	res := retrieve(t, e, q+`}`)
	for range 50 {
		if res.NextCursor == "" {
			return res
		}
		res = retrieve(t, e, q+`,"cursor":"`+res.NextCursor+`"}`)
	}
	t.Fatal("no last page after 50")
	return nil
}

// TestContinuationReleasedThroughDecorators: the resilient decorator
// (as serve wraps every adapter) forwards Release, so the last page
// frees the engine's point in time as it does without it; over an
// adapter that releases nothing, the decorator changes nothing either.
func TestContinuationReleasedThroughDecorators(t *testing.T) {
	const q = `{"query":"electricity","mode":"sparse","k":2`
	var ca *contAdapter
	e, _ := newEngine(t, setup{emb: true, wrap: func(a adapters.Adapter) adapters.Adapter {
		ca = &contAdapter{Adapter: a}
		return resilient.New(ca, resilient.Options{}).AsAdapter()
	}})
	if res := lastPage(t, e, q); res.IndexVersion != "" || !slices.Equal(ca.released, []string{`"pit"`}) {
		t.Fatalf("through the decorator: indexVersion %q released %v", res.IndexVersion, ca.released)
	}

	plain, _ := newEngine(t, setup{emb: true, wrap: func(a adapters.Adapter) adapters.Adapter {
		return hideRelease{&contAdapter{Adapter: a}}
	}})
	wrapped, _ := newEngine(t, setup{emb: true, wrap: func(a adapters.Adapter) adapters.Adapter {
		return resilient.New(hideRelease{&contAdapter{Adapter: a}}, resilient.Options{}).AsAdapter()
	}})
	want, got := lastPage(t, plain, q), lastPage(t, wrapped, q)
	if want.IndexVersion != got.IndexVersion || !slices.Equal(hitIDs(want.Hits), hitIDs(got.Hits)) {
		t.Fatalf("decorator over a non-releaser: last page %q %v, without it %q %v",
			got.IndexVersion, hitIDs(got.Hits), want.IndexVersion, hitIDs(want.Hits))
	}
}
