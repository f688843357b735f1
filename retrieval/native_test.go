package retrieval_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// nativeFake is a FAKE adapter: the memory store with edited probe
// evidence and a stand-in for engine-native work, recording every stage
// request the Engine plans. Native MMR returns the plain dense list
// reversed with raw (increasing) scores and the raw score in
// Scores["dense"]; native hybrid runs the lexical list under Op
// "native-rrf". Nothing here is a real engine's semantics.
type nativeFake struct {
	adapters.Adapter
	edit func(*capability.Evidence)
	// label, when set, overrides the Candidates scale and floor.
	label func(*adapters.Candidates)

	mu   sync.Mutex
	reqs []adapters.SearchRequest
	// mmrK is the page a native MMR plan returns from its CandidateK pool.
	mmrK int
}

func (f *nativeFake) Probe(ctx context.Context) (*capability.Evidence, error) {
	ev, err := f.Adapter.Probe(ctx)
	if err == nil && f.edit != nil {
		f.edit(ev)
	}
	return ev, err
}

func (f *nativeFake) Plan(req *adapters.SearchRequest) (*adapters.Plan, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, *req)
	f.mu.Unlock()
	inner := *req
	if req.Stage == adapters.StageHybrid {
		inner.Stage = adapters.StageLexical
	}
	if req.MMRLambda != nil {
		// Like a real engine, diversify over the CandidateK pool.
		inner.K, f.mmrK = max(req.CandidateK, req.K), req.K
	}
	p, err := f.Adapter.Plan(&inner)
	switch {
	case err != nil:
	case req.Stage == adapters.StageHybrid:
		p.Op, p.Scale, p.Floor = "native-rrf", rcp.ScaleUnbounded, nil
	case req.MMRLambda != nil:
		p.Op = "native-mmr"
	}
	return p, err
}

func (f *nativeFake) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	c, err := f.Adapter.Search(ctx, p)
	if err != nil {
		return nil, err
	}
	if p.Op == "native-mmr" {
		slices.Reverse(c.Hits)
		c.Hits = c.Hits[:min(f.mmrK, len(c.Hits))]
		for i := range c.Hits {
			c.Hits[i].Scores = map[string]float64{"dense": c.Hits[i].Score}
		}
		c.Notes = append(c.Notes, "fake native MMR")
	}
	if f.label != nil {
		f.label(c)
	}
	return c, nil
}

func (f *nativeFake) requests() []adapters.SearchRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

func (f *nativeFake) stages() []adapters.Stage {
	var out []adapters.Stage
	for _, r := range f.requests() {
		out = append(out, r.Stage)
	}
	slices.Sort(out)
	return out
}

// newNative builds an Engine with an embedder over a nativeFake.
func newNative(t *testing.T, p capability.Policy, edit func(*capability.Evidence)) (*retrieval.Engine, *nativeFake) {
	t.Helper()
	var f *nativeFake
	e, _ := newEngine(t, setup{emb: true, policy: p, wrap: func(a adapters.Adapter) adapters.Adapter {
		f = &nativeFake{Adapter: a, edit: edit}
		return f
	}})
	return e, f
}

// fieldOpsEvidence: lang serves eq/in, year gte/lte/exists (a FAKE probe).
func fieldOpsEvidence(ev *capability.Evidence) {
	ev.FilterFields = []capability.FilterField{
		{Name: "lang", Type: filterlang.TypeKeyword, Ops: []filterlang.Op{filterlang.OpEq, filterlang.OpIn}},
		{Name: "year", Type: filterlang.TypeInt, Ops: []filterlang.Op{filterlang.OpGte, filterlang.OpLte, filterlang.OpExists}},
	}
}

func TestFieldOpsEnforced(t *testing.T) {
	e, _ := newNative(t, capability.Policy{}, fieldOpsEvidence)
	if got := e.Capabilities().Filter.Operators; !slices.Equal(got, []string{"eq", "gte", "lte", "in", "exists"}) {
		t.Fatalf("advertised operators %v, want the union of the fields' ops", got)
	}
	tests := []struct {
		name          string
		filter        string
		code          rcp.Code
		field, option string
	}{
		{name: "lang eq", filter: `{"field":"lang","op":"eq","value":"en"}`},
		{name: "year gte", filter: `{"field":"year","op":"gte","value":2020}`},
		{name: "exists advertised but not for lang", filter: `{"field":"lang","op":"exists","value":true}`,
			code: rcp.CodeInvalidParams, field: "filter.lang"},
		{name: "eq advertised but not for year", filter: `{"field":"year","op":"eq","value":2020}`,
			code: rcp.CodeInvalidParams, field: "filter.year"},
		{name: "nested under and/or/not", filter: `{"and":[{"field":"lang","op":"eq","value":"en"},{"or":[{"not":{"field":"year","op":"eq","value":1}}]}]}`,
			code: rcp.CodeInvalidParams, field: "filter.year"},
		{name: "op no field serves is not advertised", filter: `{"field":"lang","op":"ne","value":"en"}`,
			code: rcp.CodeOptionUnsupported, option: "ne"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Retrieve(context.Background(), params(t, `{"query":"solar","k":3,"filter":`+tc.filter+`}`))
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			wantErr(t, err, tc.code, tc.option, tc.field)
		})
	}
}

func TestEngineFieldOps(t *testing.T) {
	tests := []struct {
		name  string
		p     capability.Policy
		field string
		want  []filterlang.Op
	}{
		{name: "evidence ops", field: "lang", want: []filterlang.Op{"eq", "in"}},
		{name: "policy narrows", p: capability.Policy{Operators: []filterlang.Op{"lte", "in"}}, field: "year", want: []filterlang.Op{"lte"}},
		{name: "policy drops the field", p: capability.Policy{Fields: []string{"lang"}}, field: "year"},
		{name: "unknown field", field: "nosuch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newNative(t, tc.p, fieldOpsEvidence)
			if got := e.FieldOps(tc.field); !slices.Equal(got, tc.want) {
				t.Errorf("FieldOps(%s) = %v, want %v", tc.field, got, tc.want)
			}
		})
	}
}

// TestFieldOpsNilIsTypeTable: a field without Ops serves §8's table.
func TestFieldOpsNilIsTypeTable(t *testing.T) {
	e, _ := newEngine(t, setup{})
	if got, want := e.FieldOps("year"), filterlang.AllowedOps(filterlang.TypeInt); !slices.Equal(got, want) {
		t.Errorf("FieldOps(year) = %v, want %v", got, want)
	}
}

func nativeMMR(ev *capability.Evidence) { ev.NativeMMR = true }

func TestNativeMMRDense(t *testing.T) {
	e, f := newNative(t, capability.Policy{}, nativeMMR)
	all := retrieve(t, e, `{"query":"solar panels electricity","k":8,"mode":"dense"}`)
	raw := map[string]float64{}
	for _, h := range all.Hits {
		raw[h.ID] = h.Score
	}
	want := hitIDs(all.Hits)
	slices.Reverse(want)
	res := retrieve(t, e, `{"query":"solar panels electricity","k":6,"mode":"dense","mmr":{"lambda":0.3}}`)
	req := f.requests()[len(f.requests())-1]
	if req.MMRLambda == nil || *req.MMRLambda != 0.3 || req.WithVectors {
		t.Fatalf("dense request MMRLambda=%v WithVectors=%t, want 0.3 and no vectors", req.MMRLambda, req.WithVectors)
	}
	if got := hitIDs(res.Hits); !slices.Equal(got, want[:6]) {
		t.Errorf("order %v, want the engine's %v", got, want[:6])
	}
	nonIncreasing(t, res.Hits)
	for _, h := range res.Hits {
		if h.Scores.Get("dense") != raw[h.ID] || h.Scores.Get("mmr") != h.Score || h.Score > raw[h.ID] {
			t.Errorf("%s: score %v scores %v, raw %v", h.ID, h.Score, h.Scores, raw[h.ID])
		}
	}
	if !hasNote(res.Usage, "mmr: native (lambda=0.3)") || !hasNote(res.Usage, "fake native MMR") ||
		hasNote(res.Usage, "diversified by the sidecar") {
		t.Errorf("notes %q", res.Usage.Notes)
	}
	if res.Meta["scoreScale"] != string(rcp.ScaleCosine) || res.Meta["scoreFloor"] != -1.0 {
		t.Errorf("_meta %v, want the dense stage's cosine scale", res.Meta)
	}
}

// TestNativeMMRStaysSidecar: hybrid and sparse MMR diversify the fused or
// lexical list in the sidecar even when the engine has native MMR.
func TestNativeMMRStaysSidecar(t *testing.T) {
	for _, mode := range []string{"hybrid", "sparse"} {
		t.Run(mode, func(t *testing.T) {
			e, f := newNative(t, capability.Policy{}, nativeMMR)
			res := retrieve(t, e, `{"query":"solar panels","k":4,"mode":"`+mode+`","mmr":{"lambda":0.5}}`)
			for _, req := range f.requests() {
				if req.MMRLambda != nil || !req.WithVectors {
					t.Errorf("%s stage MMRLambda=%v WithVectors=%t", req.Stage, req.MMRLambda, req.WithVectors)
				}
			}
			if !hasNote(res.Usage, "mmr: diversified by the sidecar over returned vectors") || hasNote(res.Usage, "mmr: native") {
				t.Errorf("notes %q", res.Usage.Notes)
			}
			nonIncreasing(t, res.Hits)
		})
	}
}

// TestNativeMMRIncludeVectors: asking for vectors still fetches them.
func TestNativeMMRIncludeVectors(t *testing.T) {
	e, f := newNative(t, capability.Policy{}, nativeMMR)
	res := retrieve(t, e, `{"query":"solar","k":2,"mode":"dense","mmr":{},"includeVectors":true}`)
	if req := f.requests()[0]; req.MMRLambda == nil || *req.MMRLambda != 0.5 || !req.WithVectors {
		t.Errorf("MMRLambda=%v WithVectors=%t", req.MMRLambda, req.WithVectors)
	}
	if len(res.Hits) == 0 {
		t.Fatal("no hits")
	}
	if v, _ := res.Hits[0].Vector.([]float32); len(v) != dim {
		t.Errorf("hits %+v carry no vectors", res.Hits)
	}
}

func TestNativeRRFOnlyWhenExact(t *testing.T) {
	sidecar := []adapters.Stage{adapters.StageDense, adapters.StageLexical}
	native := []adapters.Stage{adapters.StageHybrid}
	tests := []struct {
		name   string
		ks     []int
		off    bool
		fusion string
		stages []adapters.Stage
		rrfK   int
		note   string
	}{
		{name: "default rrf", stages: native, rrfK: 60},
		{name: "explicit unit weights", fusion: `{"method":"rrf","weights":{"dense":1,"sparse":1},"rrfK":7}`, stages: native, rrfK: 7},
		{name: "unequal weights", fusion: `{"method":"rrf","weights":{"dense":0.5}}`, stages: sidecar,
			note: "rrf: native fusion cannot weight lists (weights sparse=1, dense=0.5)"},
		{name: "equal non-unit weights", fusion: `{"weights":{"dense":2,"sparse":2}}`, stages: sidecar,
			note: "native fusion cannot weight lists"},
		{name: "fixed k, default rrfK", ks: []int{1}, stages: sidecar,
			note: "rrf: the engine's native fusion supports rrfK [1], not 60"},
		{name: "fixed k, matching rrfK", ks: []int{1}, fusion: `{"rrfK":1}`, stages: native, rrfK: 1},
		{name: "weighted method", fusion: `{"method":"weighted"}`, stages: sidecar, note: "weighted min-max"},
		{name: "no native rrf", off: true, stages: sidecar, note: "sidecar fused 2 lists with rrf (rrfK=60)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, f := newNative(t, capability.Policy{}, func(ev *capability.Evidence) {
				ev.NativeRRF, ev.NativeRRFKs = !tc.off, tc.ks
			})
			js := `{"query":"solar panels","k":3,"mode":"hybrid"`
			if tc.fusion != "" {
				js += `,"fusion":` + tc.fusion
			}
			res := retrieve(t, e, js+`}`)
			if got := f.stages(); !slices.Equal(got, tc.stages) {
				t.Fatalf("stages %v, want %v", got, tc.stages)
			}
			if tc.rrfK != 0 && f.requests()[0].RRFK != tc.rrfK {
				t.Errorf("native RRFK %d, want %d", f.requests()[0].RRFK, tc.rrfK)
			}
			if tc.note != "" && !hasNote(res.Usage, tc.note) {
				t.Errorf("notes %q lack %q", res.Usage.Notes, tc.note)
			}
			if len(res.Hits) == 0 {
				t.Fatal("no hits")
			}
			if _, fused := res.Hits[0].Scores.Lookup("fused"); !fused {
				t.Errorf("hit scores %v lack fused", res.Hits[0].Scores)
			}
		})
	}
}

// TestScaleLabelPrefersRuntime: _meta names the scale and floor the
// adapter returned, then the plan's, then capability.ModeScale.
func TestScaleLabelPrefersRuntime(t *testing.T) {
	tests := []struct {
		name  string
		label func(*adapters.Candidates)
		scale string
		floor any
	}{
		{name: "plan", scale: "cosine", floor: -1.0},
		{name: "runtime wins", label: func(c *adapters.Candidates) {
			zero := 0.0
			c.Scale, c.Floor = rcp.ScaleUnbounded, &zero
		}, scale: "unbounded", floor: 0.0},
		{name: "runtime without floor", label: func(c *adapters.Candidates) { c.Scale, c.Floor = rcp.ScaleDot, nil },
			scale: "dot"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, f := newNative(t, capability.Policy{}, nil)
			f.label = tc.label
			res := retrieve(t, e, `{"query":"solar","k":2,"mode":"dense"}`)
			if res.Meta["scoreScale"] != tc.scale || res.Meta["scoreFloor"] != tc.floor {
				t.Errorf("_meta %v, want scale %s floor %v", res.Meta, tc.scale, tc.floor)
			}
		})
	}
}

// TestRecallDepth: a single engine list that nothing re-ranks fetches the
// page plus one; fusion and sidecar MMR fetch candidateK. CandidateK is
// passed on unchanged either way (kNN num_candidates, rank windows).
func TestRecallDepth(t *testing.T) {
	rrf := func(ev *capability.Evidence) { ev.NativeRRF = true }
	tests := []struct {
		name   string
		edit   func(*capability.Evidence)
		params string
		want   []int // K per stage request
	}{
		{"sparse", nil, `"mode":"sparse"`, []int{6}},
		{"dense", nil, `"mode":"dense"`, []int{6}},
		{"native mmr", nativeMMR, `"mode":"dense","mmr":{"lambda":0.3}`, []int{6}},
		{"native rrf", rrf, `"mode":"hybrid","fusion":{"method":"rrf"}`, []int{6}},
		{"sidecar fusion", nil, `"mode":"hybrid"`, []int{40, 40}},
		{"sidecar mmr", nil, `"mode":"sparse","mmr":{"lambda":0.5}`, []int{40}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, f := newNative(t, capability.Policy{}, tc.edit)
			res := retrieve(t, e, `{"query":"solar panels","k":5,"candidateK":40,`+tc.params+`}`)
			var got []int
			for _, req := range f.requests() {
				got = append(got, req.K)
				if req.CandidateK != 40 {
					t.Errorf("%s stage CandidateK %d, want 40", req.Stage, req.CandidateK)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("stage K %v, want %v", got, tc.want)
			}
			if len(res.Hits) != 5 || res.Usage.Candidates == nil || *res.Usage.Candidates < 5 {
				t.Errorf("%d hits, usage %+v", len(res.Hits), res.Usage)
			}
		})
	}
}

// TestApproxScoresLabelled: over a dense field whose evidence says a
// quantised index approximates its scores (a FAKE probe), the capability
// set advertises no cosine scale, no floor and no convex fusion, every
// mode that runs a dense stage says so in usage.notes, and sparse does not.
func TestApproxScoresLabelled(t *testing.T) {
	e, _ := newNative(t, capability.Policy{}, func(ev *capability.Evidence) {
		vf := &ev.VectorFields[0]
		vf.ApproxScores, vf.Detail = true, map[string]string{"quantisation": "int8_hnsw"}
	})
	r := e.Capabilities().Retrieve
	if r.ScoreScale != rcp.ScaleUnbounded || r.ScoreFloor != nil || slices.Contains(r.Fusion, rcp.FusionConvex) {
		t.Fatalf("retrieve scale %s floor %v fusion %v", r.ScoreScale, r.ScoreFloor, r.Fusion)
	}
	tests := []struct {
		mode string
		note bool
	}{{"dense", true}, {"hybrid", true}, {"sparse", false}}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			res := retrieve(t, e, `{"query":"solar electricity","mode":"`+tc.mode+`","k":3}`)
			if got := hasNote(res.Usage, "dense scores on embedding are approximate (quantised index int8_hnsw"); got != tc.note {
				t.Errorf("approximate-scores note %t, want %t: %q", got, tc.note, res.Usage.Notes)
			}
			if _, floor := res.Meta["scoreFloor"]; tc.mode == "dense" && (res.Meta["scoreScale"] != "unbounded" || floor) {
				t.Errorf("dense over approximate scores labelled %v", res.Meta)
			}
		})
	}
	_, err := e.Retrieve(context.Background(), params(t, `{"query":"solar","mode":"hybrid","fusion":{"method":"convex"}}`))
	wantErr(t, err, rcp.CodeOptionUnsupported, "convex", "")
}
