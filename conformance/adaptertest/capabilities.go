package adaptertest

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func (e *env) hasMode(m rcp.Mode) bool {
	return e.caps.Retrieve != nil && slices.Contains(e.caps.Retrieve.Modes, m)
}

func (e *env) hasFusion(f rcp.FusionMethod) bool {
	return e.caps.Retrieve != nil && slices.Contains(e.caps.Retrieve.Fusion, f)
}

func (e *env) hasOp(op filterlang.Op) bool {
	return e.caps.Filter != nil && slices.Contains(e.caps.Filter.Operators, string(op))
}

func (e *env) maxK() int {
	if e.caps.Retrieve == nil || e.caps.Retrieve.MaxK == 0 {
		return 200
	}
	return e.caps.Retrieve.MaxK
}

func (e *env) floor() *float64 {
	if e.caps.Retrieve == nil {
		return nil
	}
	return e.caps.Retrieve.ScoreFloor
}

func (e *env) skipUnlessMode(t testing.TB, m rcp.Mode) {
	t.Helper()
	if !e.hasMode(m) {
		t.Skipf("not advertised: retrieve.modes lacks %q", m)
	}
}

// anyQuery returns a mode and a query with hits in it: dense when
// advertised (it reaches every document), else the default mode.
func (e *env) anyQuery() P {
	if e.hasMode(rcp.ModeDense) {
		return P{"query": QueryEverything, "mode": "dense"}
	}
	return P{"query": "espresso coffee tea code travel food music science"}
}

func testAdvertisedWorks(t *testing.T, mk HarnessMaker) {
	e := newEnv(t, mk, full)
	for _, m := range allModes {
		t.Run("Modes/"+string(m), func(t *testing.T) {
			e.skipUnlessMode(t, m)
			res := e.mustRetrieve(t, P{"query": modeQueries[m][0], "k": 5, "mode": m})
			e.checkHits(t, res, 5)
			e.checkScale(t, res, m)
		})
	}
	for _, f := range []rcp.FusionMethod{rcp.FusionRRF, rcp.FusionWeighted, rcp.FusionConvex} {
		t.Run("Fusion/"+string(f), func(t *testing.T) { e.checkFusion(t, f) })
	}
	for _, op := range filterlang.AllOps {
		t.Run("Operators/"+string(op), func(t *testing.T) { e.checkOperator(t, op) })
	}
	t.Run("FilterFields", func(t *testing.T) { e.checkFilterFields(t) })
	t.Run("DefaultMode", func(t *testing.T) {
		res := e.mustRetrieve(t, P{"query": "espresso", "k": 5})
		e.checkHits(t, res, 5)
	})
	t.Run("InfoMatchesInitialize", func(t *testing.T) { e.checkInfoStable(t) })
	t.Run("Embed", func(t *testing.T) { e.checkEmbed(t) })
	t.Run("Citations", func(t *testing.T) { e.checkCitations(t) })
	t.Run("Streaming", func(t *testing.T) {
		if e.caps.Streaming == nil {
			t.Skip("not advertised: streaming")
		}
		p := e.anyQuery().With("k", 3).With("_meta", map[string]any{"progressToken": "p1"})
		e.checkHits(t, e.mustRetrieve(t, p), 3)
	})
}

// checkFusion: "ristretto" ranks d01 first lexically and (through the fake
// embedder) densely, so every fusion method must rank it first.
func (e *env) checkFusion(t *testing.T, f rcp.FusionMethod) {
	e.skipUnlessMode(t, rcp.ModeHybrid)
	if !e.hasFusion(f) {
		t.Skipf("not advertised: retrieve.fusion lacks %q", f)
	}
	res := e.mustRetrieve(t, P{"query": "ristretto", "k": 5, "mode": "hybrid", "fusion": map[string]any{"method": f}})
	e.checkHits(t, res, 5)
	e.checkScale(t, res, rcp.ModeHybrid)
	wantFirst(t, res, "d01")
}

// checkOperator sends the first filter case of op whose fields are
// advertised; every hit must satisfy the oracle.
func (e *env) checkOperator(t *testing.T, op filterlang.Op) {
	if !e.hasOp(op) {
		t.Skipf("not advertised: filter.operators lacks %q", op)
	}
	for _, tc := range filterCases[string(op)] {
		if e.filterSkipReason(tc.filter) == "" {
			e.checkFilterSubset(t, tc)
			return
		}
	}
	t.Skipf("no case for operator %q on an advertised field", op)
}

// checkFilterSubset: the request succeeds, returns hits when the oracle
// matches something, and every hit satisfies the oracle.
func (e *env) checkFilterSubset(t *testing.T, tc filterCase) {
	t.Helper()
	res := e.mustRetrieve(t, e.anyQuery().With("k", len(e.schema.Docs)).With("filter", tc.filter))
	e.checkHits(t, res, len(e.schema.Docs))
	if len(res.Hits) == 0 && len(oracleIDs(e.schema.Docs, tc.want)) > 0 && e.hasMode(rcp.ModeDense) {
		t.Errorf("filter %s: no hits, oracle matches %v", P(tc.filter), oracleIDs(e.schema.Docs, tc.want))
	}
	for _, h := range res.Hits {
		if d, ok := docByID(e.schema.Docs, h.ID); !ok || !tc.want(d) {
			t.Errorf("filter %s: hit %s does not satisfy the filter", P(tc.filter), h.ID)
		}
	}
}

// checkFilterFields: every advertised filter field is usable.
func (e *env) checkFilterFields(t *testing.T) {
	if e.caps.Filter == nil {
		t.Skip("not advertised: filter")
	}
	names := make([]string, 0, len(e.caps.Filter.Fields))
	for n := range e.caps.Filter.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tc, ok := e.caseForField(name)
			if !ok {
				t.Skipf("field %q is not in the conformance schema", name)
			}
			e.checkFilterSubset(t, tc)
		})
	}
}

// caseForField finds a single-condition filter case on field name that
// uses an advertised operator.
func (e *env) caseForField(name string) (filterCase, bool) {
	for _, op := range sortedOps() {
		for _, tc := range filterCases[op] {
			if tc.filter["field"] == name && e.filterSkipReason(tc.filter) == "" {
				return tc, true
			}
		}
	}
	return filterCase{}, false
}

// checkInfoStable: info reports the session's capability set (§13.2),
// also after failed requests.
func (e *env) checkInfoStable(t *testing.T) {
	e.retrieve(t, P{"query": "x", "k": -1})
	raw, rerr := e.call(t, rcp.MethodInfo, P{})
	if rerr != nil {
		t.Fatalf("info: %d %s", rerr.Code, rerr.Message)
	}
	var info rcp.InitializeResult
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e.caps, info.Capabilities); diff != "" {
		t.Errorf("info capabilities differ from initialize (-initialize +info):\n%s", diff)
	}
}

func (e *env) checkEmbed(t *testing.T) {
	if e.caps.Embed == nil {
		t.Skip("not advertised: embed")
	}
	raw, rerr := e.call(t, rcp.MethodEmbed, P{"inputs": []string{"vec:d01", "hello"}})
	if rerr != nil {
		t.Fatalf("embed: %d %s", rerr.Code, rerr.Message)
	}
	var res struct{ Vectors [][]float32 }
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Vectors) != 2 {
		t.Fatalf("embed returned %d vectors, want 2", len(res.Vectors))
	}
	for i, v := range res.Vectors {
		if len(v) != e.caps.Embed.Dimension {
			t.Errorf("vector %d has %d dims, advertised dimension %d", i, len(v), e.caps.Embed.Dimension)
		}
	}
}

// checkCitations: with citations advertised, hits carry a citation whose
// title (when set) is the document's title.
func (e *env) checkCitations(t *testing.T) {
	if e.caps.Citations == nil {
		t.Skip("not advertised: citations")
	}
	res := e.mustRetrieve(t, e.anyQuery().With("k", 5))
	for _, h := range res.Hits {
		d, _ := docByID(e.schema.Docs, h.ID)
		switch {
		case h.Citation == nil:
			t.Errorf("hit %s has no citation", h.ID)
		case h.Citation.Title != "" && h.Citation.Title != d.Title:
			t.Errorf("hit %s citation.title = %q, want %q", h.ID, h.Citation.Title, d.Title)
		}
	}
}

// optionalMethods are the §7 methods gated by a capability, with params
// and the gate as advertised in caps.
var optionalMethods = []struct {
	method     string
	params     P
	advertised func(c rcp.Capabilities) bool
}{
	{rcp.MethodEmbed, P{"inputs": []string{"x"}}, func(c rcp.Capabilities) bool { return c.Embed != nil }},
	{rcp.MethodEmbedSparse, P{"inputs": []string{"x"}}, func(c rcp.Capabilities) bool { return c.Sparse != nil }},
	{rcp.MethodEmbedMulti, P{"inputs": []string{"x"}}, func(c rcp.Capabilities) bool { return c.Multi != nil }},
	{rcp.MethodRerank, P{"query": "x", "documents": []string{"a"}}, func(c rcp.Capabilities) bool { return c.Rerank != nil }},
	{rcp.MethodTransform, P{"query": "x", "method": "rewrite"}, func(c rcp.Capabilities) bool { return c.Transform != nil }},
	{rcp.MethodGraph, P{"query": "x", "op": "local"}, func(c rcp.Capabilities) bool { return c.Graph != nil }},
	{rcp.MethodIndexAdd, P{"documents": []map[string]any{{"id": "absent-1", "text": "x"}}},
		func(c rcp.Capabilities) bool { return c.Index != nil && c.Index.Writable }},
	{rcp.MethodIndexDelete, P{"ids": []string{"absent-1"}}, func(c rcp.Capabilities) bool { return c.Index != nil }},
	{rcp.MethodCatalogList, P{}, func(c rcp.Capabilities) bool { return c.Catalog != nil }},
	{rcp.MethodFeedback, P{"query": "x", "signals": []any{}}, func(c rcp.Capabilities) bool { return c.Feedback != nil }},
	{rcp.MethodMemoryBuild, P{"scope": "global"}, func(c rcp.Capabilities) bool { return c.Memory != nil }},
	{rcp.MethodMemoryRecall, P{"query": "x"}, func(c rcp.Capabilities) bool { return c.Memory != nil }},
	{rcp.MethodRetrieve, P{"query": "x"}, func(c rcp.Capabilities) bool { return c.Retrieve != nil }},
}

// testAbsentRejected is the honesty check (§6, §7, §12): every
// unadvertised mode, fusion, option, operator, field and method is
// refused with the right code and data. It always runs, on the full
// Engine and on a narrowed one (no embedder, fewer fields and operators,
// read-only) so that every adapter has absent features to probe.
func testAbsentRejected(t *testing.T, mk HarnessMaker) {
	for _, v := range []struct {
		name string
		v    variant
	}{{"Full", full}, {"Narrowed", narrowed}} {
		t.Run(v.name, func(t *testing.T) {
			e := newEnv(t, mk, v.v)
			e.absentRetrieveOptions(t)
			e.absentFilter(t)
			e.absentMethods(t)
		})
	}
}

func (e *env) absentRetrieveOptions(t *testing.T) {
	for _, m := range allModes {
		t.Run("Modes/"+string(m), func(t *testing.T) { e.checkAbsentMode(t, m) })
	}
	for _, f := range []rcp.FusionMethod{rcp.FusionRRF, rcp.FusionWeighted, rcp.FusionConvex} {
		t.Run("Fusion/"+string(f), func(t *testing.T) {
			e.skipUnlessMode(t, rcp.ModeHybrid)
			if e.hasFusion(f) {
				t.Skipf("advertised: retrieve.fusion has %q", f)
			}
			p := P{"query": "espresso", "k": 3, "mode": "hybrid", "fusion": map[string]any{"method": f}}
			_, rerr := e.retrieve(t, p)
			wantError(t, rerr, rcp.CodeOptionUnsupported, "", string(f))
			res := e.mustRetrieve(t, p.With("strict", false))
			if res.Usage == nil || len(res.Usage.Notes) == 0 {
				t.Errorf("strict:false fallback from fusion %s: usage.notes is empty, want a note", f)
			}
		})
	}
	r := e.caps.Retrieve
	e.absentOption(t, "Rerank", r != nil && r.RerankBuiltin, "rerank", map[string]any{"method": "cross-encoder", "topN": 5})
	e.absentOption(t, "MMR", r != nil && r.MMR, "mmr", map[string]any{"lambda": 0.5})
	e.absentOption(t, "TokenBudget", r != nil && r.TokenBudget, "tokenBudget", 100)
}

// checkAbsentMode: an unadvertised mode is -32005 with data.option = mode;
// with strict:false it degrades with a usage.notes entry (§7.7).
func (e *env) checkAbsentMode(t *testing.T, m rcp.Mode) {
	if e.caps.Retrieve == nil {
		t.Skip("not advertised: retrieve (see Methods)")
	}
	if e.hasMode(m) {
		t.Skipf("advertised: retrieve.modes has %q", m)
	}
	p := P{"query": "espresso", "k": 3, "mode": m}
	_, rerr := e.retrieve(t, p)
	wantError(t, rerr, rcp.CodeOptionUnsupported, "", string(m))
	res := e.mustRetrieve(t, p.With("strict", false))
	e.checkHits(t, res, 3)
	if res.Usage == nil || len(res.Usage.Notes) == 0 {
		t.Errorf("strict:false fallback from mode %s: usage.notes is empty, want a note", m)
	}
}

// absentOption: an unadvertised retrieve option is -32005 naming it.
func (e *env) absentOption(t *testing.T, name string, advertised bool, key string, value any) {
	t.Run(name, func(t *testing.T) {
		if e.caps.Retrieve == nil {
			t.Skip("not advertised: retrieve (see Methods)")
		}
		if advertised {
			t.Skipf("advertised: retrieve %s", key)
		}
		_, rerr := e.retrieve(t, P{"query": "espresso", "k": 3, key: value})
		wantError(t, rerr, rcp.CodeOptionUnsupported, "", anyValue)
	})
}

func (e *env) absentFilter(t *testing.T) {
	for _, op := range filterlang.AllOps {
		t.Run("Operators/"+string(op), func(t *testing.T) { e.checkAbsentOp(t, op) })
	}
	for _, f := range e.schema.Fields {
		t.Run("FilterFields/"+f.Name, func(t *testing.T) {
			if e.caps.Filter == nil {
				t.Skip("not advertised: filter (see FilterAbsent)")
			}
			if _, ok := e.caps.Filter.Fields[f.Name]; ok {
				t.Skipf("advertised: filter.fields has %q", f.Name)
			}
			// §8: a filter naming an unadvertised field is -32602.
			op0 := e.caps.Filter.Operators[0]
			_, rerr := e.retrieve(t, P{"query": "espresso", "k": 3, "filter": cond(f.Name, op0, sampleValue(f, filterlang.Op(op0)))})
			wantError(t, rerr, rcp.CodeInvalidParams, "filter."+f.Name, "")
		})
	}
	for _, f := range e.schema.Fields {
		t.Run("FieldOperators/"+f.Name, func(t *testing.T) { e.checkUnservedFieldOps(t, f) })
	}
	t.Run("UnknownField", func(t *testing.T) {
		if e.caps.Filter == nil {
			t.Skip("not advertised: filter (see FilterAbsent)")
		}
		_, rerr := e.retrieve(t, P{"query": "espresso", "k": 3, "filter": cond("no_such_field", "eq", "x")})
		wantError(t, rerr, rcp.CodeInvalidParams, "filter.no_such_field", "")
	})
	t.Run("FilterAbsent", func(t *testing.T) {
		if e.caps.Filter != nil || e.caps.Retrieve == nil {
			t.Skip("advertised: filter")
		}
		_, rerr := e.retrieve(t, P{"query": "espresso", "k": 3, "filter": cond("lang", "eq", "en")})
		if rerr == nil || (rerr.Code != rcp.CodeInvalidParams && rerr.Code != rcp.CodeOptionUnsupported) {
			t.Errorf("filter without the filter capability: got %v, want -32602 or -32005", rerr)
		}
	})
}

// checkAbsentOp: an operator outside filter.operators is -32005 with
// data.option = op, on a field whose type allows it (§8).
func (e *env) checkAbsentOp(t *testing.T, op filterlang.Op) {
	if e.caps.Filter == nil {
		t.Skip("not advertised: filter (see FilterAbsent)")
	}
	if e.hasOp(op) {
		t.Skipf("advertised: filter.operators has %q", op)
	}
	f, ok := e.fieldAllowing(op)
	if !ok {
		t.Skipf("no advertised field whose type allows %q", op)
	}
	_, rerr := e.retrieve(t, P{"query": "espresso", "k": 3, "filter": cond(f.Name, string(op), sampleValue(f, op))})
	wantError(t, rerr, rcp.CodeOptionUnsupported, "", string(op))
}

// fieldAllowing returns an advertised schema field whose §8 type admits op.
func (e *env) fieldAllowing(op filterlang.Op) (Field, bool) {
	for _, f := range e.schema.Fields {
		if _, adv := e.caps.Filter.Fields[f.Name]; adv && opApplies(op, f) {
			return f, true
		}
	}
	return Field{}, false
}

// opApplies is the §8 operator table, restated independently of mapping.
func opApplies(op filterlang.Op, f Field) bool {
	switch op {
	case filterlang.OpGt, filterlang.OpGte, filterlang.OpLt, filterlang.OpLte:
		return f.Type == filterlang.TypeInt || f.Type == filterlang.TypeFloat || f.Type == filterlang.TypeDate
	case filterlang.OpContains:
		return f.Type == filterlang.TypeText || f.Array
	}
	return f.Type != filterlang.TypeGeo
}

// sampleValue returns a well-typed value for op on f.
// checkUnservedFieldOps: an advertised operator that §8 allows for the
// field's type, but that this field does not serve exactly, is -32602 on
// filter.<field> (§8: "the operator is not allowed for that field").
func (e *env) checkUnservedFieldOps(t *testing.T, f Field) {
	if e.caps.Filter == nil {
		t.Skip("not advertised: filter")
	}
	if _, ok := e.caps.Filter.Fields[f.Name]; !ok {
		t.Skipf("not advertised: filter.fields lacks %q", f.Name)
	}
	served, checked := e.eng.FieldOps(f.Name), 0
	for _, op := range filterlang.AllowedOps(f.Type) {
		if slices.Contains(served, op) || !slices.Contains(e.caps.Filter.Operators, string(op)) {
			continue
		}
		checked++
		_, rerr := e.retrieve(t, P{"query": "espresso", "k": 3, "filter": cond(f.Name, string(op), sampleValue(f, op))})
		wantError(t, rerr, rcp.CodeInvalidParams, "filter."+f.Name, "")
	}
	if checked == 0 {
		t.Skipf("field %q serves every advertised operator its type allows", f.Name)
	}
}

func sampleValue(f Field, op filterlang.Op) any {
	scalar := map[filterlang.FieldType]any{filterlang.TypeKeyword: "en", filterlang.TypeText: "Tokyo", filterlang.TypeInt: 2020,
		filterlang.TypeFloat: 4.5, filterlang.TypeBool: true, filterlang.TypeDate: "2020-01-01T00:00:00Z"}[f.Type]
	switch op {
	case filterlang.OpExists:
		return true
	case filterlang.OpIn, filterlang.OpNin:
		return []any{scalar}
	}
	return scalar
}

func (e *env) absentMethods(t *testing.T) {
	for _, m := range optionalMethods {
		t.Run("Methods/"+m.method, func(t *testing.T) {
			if m.advertised(e.caps) {
				t.Skipf("advertised: capability for %s", m.method)
			}
			_, rerr := e.call(t, m.method, m.params)
			wantError(t, rerr, rcp.CodeCapabilityMissing, "", "")
		})
	}
	for _, m := range []string{"no/such/method", "retrieve2", "Retrieve"} {
		t.Run("Undefined/"+m, func(t *testing.T) {
			_, rerr := e.call(t, m, P{"query": "x"})
			wantError(t, rerr, rcp.CodeUnknownMethod, "", "")
		})
	}
}

// testProbe: the adapter's evidence matches the Schema it was built from
// (text fields, vector dims and similarity, filter field types, count).
func testProbe(t *testing.T, mk HarnessMaker) {
	e := newEnv(t, mk, full)
	ev, err := e.a.Probe(context.Background())
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	s := e.schema
	t.Run("TextFields", func(t *testing.T) {
		if !slices.ContainsFunc(ev.TextFields, func(f capability.TextField) bool { return f.Name == s.TextField }) {
			t.Errorf("text field %q missing from evidence %+v", s.TextField, ev.TextFields)
		}
	})
	t.Run("Vector", func(t *testing.T) {
		if e.traits.NoVectors {
			if len(ev.VectorFields) != 0 {
				t.Errorf("engine without vector search reports vector fields %+v", ev.VectorFields)
			}
			return
		}
		checkVectorEvidence(t, ev, s.Vector)
	})
	for _, f := range s.Fields {
		t.Run("FilterFields/"+f.Name, func(t *testing.T) {
			i := slices.IndexFunc(ev.FilterFields, func(x capability.FilterField) bool { return x.Name == f.Name })
			switch {
			case i < 0:
				t.Errorf("filter field %q missing from evidence", f.Name)
			case ev.FilterFields[i].Type != f.Type:
				t.Errorf("filter field %q: type %q, want %q", f.Name, ev.FilterFields[i].Type, f.Type)
			}
		})
	}
	t.Run("DocCount", func(t *testing.T) {
		if ev.DocCount != 0 && ev.DocCount != int64(len(s.Docs)) {
			t.Errorf("docCount = %d, want %d", ev.DocCount, len(s.Docs))
		}
	})
	t.Run("Idempotent", func(t *testing.T) {
		again, err := e.a.Probe(context.Background())
		if err != nil {
			t.Fatalf("second Probe: %v", err)
		}
		if diff := cmp.Diff(ev, again); diff != "" {
			t.Errorf("Probe is not idempotent (-first +second):\n%s", diff)
		}
	})
}

// checkVectorEvidence finds the schema's vector field (by name, or the
// only one: RCP never exposes vector field names) and checks it.
func checkVectorEvidence(t *testing.T, ev *capability.Evidence, want VectorSpec) {
	i := slices.IndexFunc(ev.VectorFields, func(v capability.VectorField) bool { return v.Name == want.Name })
	if i < 0 && len(ev.VectorFields) == 1 {
		t.Logf("vector field is named %q, schema says %q", ev.VectorFields[0].Name, want.Name)
		i = 0
	}
	if i < 0 {
		t.Fatalf("vector field %q missing from evidence %+v", want.Name, ev.VectorFields)
	}
	got := ev.VectorFields[i]
	if got.Dims != want.Dims || got.Similarity != want.Similarity {
		t.Errorf("vector field %q: %d-d %s, want %d-d %s", got.Name, got.Dims, got.Similarity, want.Dims, want.Similarity)
	}
	if got.Element.OrFloat() != want.Element.OrFloat() {
		t.Errorf("vector field %q: element %q, want %q", got.Name, got.Element, want.Element.OrFloat())
	}
}
