package capability

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func fullEvidence() *Evidence {
	return &Evidence{
		Engine: "test", Target: "docs",
		TextFields:   []TextField{{Name: "title"}, {Name: "text"}},
		VectorFields: []VectorField{{Name: "emb", Dims: 4, Similarity: SimCosine, Indexed: true}},
		FilterFields: []FilterField{
			{Name: "lang", Type: filterlang.TypeKeyword, Ops: []filterlang.Op{filterlang.OpEq, filterlang.OpIn}},
			{Name: "year", Type: filterlang.TypeInt, Ops: []filterlang.Op{filterlang.OpEq, filterlang.OpGte}},
		},
		TitleField: "title", Pagination: true, Writable: true, Deterministic: true,
	}
}

func reason(t *testing.T, rs []Reason, key string) Reason {
	t.Helper()
	for _, r := range rs {
		if r.Capability == key {
			if r.Why == "" {
				t.Errorf("reason %s has no why", key)
			}
			return r
		}
	}
	t.Fatalf("no reason for %q in %+v", key, rs)
	return Reason{}
}

func TestDeriveModes(t *testing.T) {
	dot := fullEvidence()
	dot.VectorFields[0].Similarity = SimDot
	infer := fullEvidence()
	infer.QueryInference = true
	noText := fullEvidence()
	noText.TextFields = nil
	tests := []struct {
		name      string
		ev        *Evidence
		p         Policy
		modes     []rcp.Mode
		def       rcp.Mode
		scale     rcp.ScoreScale
		floor     *float64
		fusion    []rcp.FusionMethod
		mmr       bool
		whyDense  bool
		noRetrive bool
	}{
		{name: "hybrid", ev: fullEvidence(), p: Policy{EmbedDim: 4},
			modes: []rcp.Mode{"dense", "sparse", "hybrid"}, def: "hybrid", scale: rcp.ScaleUnbounded,
			fusion: []rcp.FusionMethod{"rrf", "weighted", "convex"}, mmr: true, whyDense: true},
		{name: "no embedder", ev: fullEvidence(), modes: []rcp.Mode{"sparse"}, def: "sparse",
			scale: rcp.ScaleBM25, floor: floorOf(0)},
		{name: "dim mismatch", ev: fullEvidence(), p: Policy{EmbedDim: 8}, modes: []rcp.Mode{"sparse"},
			def: "sparse", scale: rcp.ScaleBM25, floor: floorOf(0)},
		{name: "query inference", ev: infer, modes: []rcp.Mode{"dense", "sparse", "hybrid"}, def: "hybrid",
			scale: rcp.ScaleUnbounded, fusion: []rcp.FusionMethod{"rrf", "weighted", "convex"}, mmr: true, whyDense: true},
		{name: "dot has no floor so no convex", ev: dot, p: Policy{EmbedDim: 4},
			modes: []rcp.Mode{"dense", "sparse", "hybrid"}, def: "hybrid", scale: rcp.ScaleUnbounded,
			fusion: []rcp.FusionMethod{"rrf", "weighted"}, mmr: true, whyDense: true},
		{name: "dense only cosine", ev: noText, p: Policy{EmbedDim: 4}, modes: []rcp.Mode{"dense"},
			def: "dense", scale: rcp.ScaleCosine, floor: floorOf(-1), mmr: true, whyDense: true},
		{name: "nothing searchable", ev: &Evidence{Target: "x"}, noRetrive: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			caps, rs := Derive(tc.ev, tc.p)
			if r := reason(t, rs, "retrieve.modes.dense"); r.Advertised != tc.whyDense {
				t.Errorf("dense reason advertised=%t want %t", r.Advertised, tc.whyDense)
			}
			if tc.noRetrive {
				if caps.Retrieve != nil || caps.Filter != nil || caps.Citations != nil {
					t.Fatalf("unsearchable target advertised retrieve: %+v", caps)
				}
				return
			}
			r := caps.Retrieve
			if r == nil {
				t.Fatal("retrieve absent")
			}
			if !slices.Equal(r.Modes, tc.modes) || r.DefaultMode != tc.def {
				t.Errorf("modes %v default %s, want %v %s", r.Modes, r.DefaultMode, tc.modes, tc.def)
			}
			if r.ScoreScale != tc.scale || !reflect.DeepEqual(r.ScoreFloor, tc.floor) {
				t.Errorf("scale %s floor %v, want %s %v", r.ScoreScale, r.ScoreFloor, tc.scale, tc.floor)
			}
			if !slices.Equal(r.Fusion, tc.fusion) || r.MMR != tc.mmr {
				t.Errorf("fusion %v mmr %t, want %v %t", r.Fusion, r.MMR, tc.fusion, tc.mmr)
			}
			if r.MaxK != DefaultMaxK || !r.TokenBudget {
				t.Errorf("maxK %d tokenBudget %t", r.MaxK, r.TokenBudget)
			}
		})
	}
}

func TestDeriveReasonsCoverEveryKey(t *testing.T) {
	for _, ev := range []*Evidence{fullEvidence(), {}} {
		_, rs := Derive(ev, Policy{})
		for _, key := range []string{"retrieve", "retrieve.modes.sparse", "retrieve.modes.dense",
			"retrieve.modes.hybrid", "retrieve.fusion.rrf", "retrieve.fusion.weighted", "retrieve.fusion.convex",
			"filter", "citations", "pagination", "index", "embed", "rerank", "transform", "streaming", "log"} {
			reason(t, rs, key)
		}
	}
	_, rs := Derive(fullEvidence(), Policy{})
	if r := reason(t, rs, "retrieve.modes.dense"); r.Why != "vector field emb (4-d cosine) but no embedder configured" {
		t.Errorf("dense why = %q", r.Why)
	}
}

func TestDeriveFilter(t *testing.T) {
	tests := []struct {
		name   string
		p      Policy
		fields map[string]string
		ops    []string
	}{
		{name: "all", fields: map[string]string{"lang": "keyword", "year": "int"}, ops: []string{"eq", "gte", "in"}},
		{name: "narrowed fields", p: Policy{Fields: []string{"year", "nosuch"}},
			fields: map[string]string{"year": "int"}, ops: []string{"eq", "gte"}},
		{name: "narrowed ops drop a field left without one", p: Policy{Operators: []filterlang.Op{filterlang.OpIn, filterlang.OpContains}},
			fields: map[string]string{"lang": "keyword"}, ops: []string{"in"}},
		{name: "no surviving field", p: Policy{Fields: []string{"nosuch"}}},
		{name: "no surviving op", p: Policy{Operators: []filterlang.Op{filterlang.OpExists}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			caps, rs := Derive(fullEvidence(), tc.p)
			if tc.fields == nil {
				if caps.Filter != nil || reason(t, rs, "filter").Advertised {
					t.Fatalf("filter advertised: %+v", caps.Filter)
				}
				return
			}
			if caps.Filter == nil {
				t.Fatal("filter absent")
			}
			if !reflect.DeepEqual(caps.Filter.Fields, tc.fields) || !slices.Equal(caps.Filter.Operators, tc.ops) {
				t.Errorf("filter %+v, want %v %v", caps.Filter, tc.fields, tc.ops)
			}
		})
	}
}

// TestDeriveFilterTypeOps checks that fields without explicit ops get the
// §8 table for their type (gt/gte/lt/lte only for ordered types).
func TestDeriveFilterTypeOps(t *testing.T) {
	ev := &Evidence{TextFields: []TextField{{Name: "t"}},
		FilterFields: []FilterField{{Name: "tag", Type: filterlang.TypeKeyword}}}
	caps, _ := Derive(ev, Policy{})
	if caps.Filter == nil {
		t.Fatal("filter absent")
	}
	for _, op := range []string{"eq", "ne", "in", "nin", "exists"} {
		if !slices.Contains(caps.Filter.Operators, op) {
			t.Errorf("keyword field lacks %s: %v", op, caps.Filter.Operators)
		}
	}
	if slices.Contains(caps.Filter.Operators, "gt") {
		t.Errorf("keyword field advertises gt: %v", caps.Filter.Operators)
	}
}

func TestDeriveFlags(t *testing.T) {
	ro := fullEvidence()
	ro.Writable, ro.Pagination, ro.TitleField, ro.Deterministic = false, false, "", false
	uri := fullEvidence()
	uri.TitleField, uri.URIField = "", "url"
	tests := []struct {
		name                                 string
		ev                                   *Evidence
		p                                    Policy
		index, pages, cites, det, strm, logs bool
		embed                                bool
	}{
		{name: "full", ev: fullEvidence(), p: Policy{Writable: true, Streaming: true, Log: true, EmbedDim: 4, EmbedIdentity: "m"},
			index: true, pages: true, cites: true, det: true, strm: true, logs: true, embed: true},
		{name: "policy read-only", ev: fullEvidence(), pages: true, cites: true, det: true},
		{name: "engine read-only", ev: ro, p: Policy{Writable: true}},
		{name: "uri cites", ev: uri, pages: true, cites: true, det: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, rs := Derive(tc.ev, tc.p)
			got := []bool{c.Index != nil, c.Pagination != nil, c.Citations != nil, c.Retrieve.Deterministic,
				c.Streaming != nil, c.Log != nil, c.Embed != nil}
			want := []bool{tc.index, tc.pages, tc.cites, tc.det, tc.strm, tc.logs, tc.embed}
			if !slices.Equal(got, want) {
				t.Errorf("index,pages,cites,det,stream,log,embed = %v want %v", got, want)
			}
			if reason(t, rs, "index").Advertised != tc.index || reason(t, rs, "embed").Advertised != tc.embed {
				t.Error("reasons disagree with capabilities")
			}
			if c.Index != nil && !c.Index.Writable {
				t.Error("index advertised without writable:true")
			}
			if c.Rerank != nil || c.Transform != nil {
				t.Error("rerank/transform advertised")
			}
		})
	}
}

func TestDeriveEmbed(t *testing.T) {
	c, _ := Derive(fullEvidence(), Policy{EmbedDim: 4, EmbedIdentity: "bge", EmbedBatchLimit: 7})
	want := &rcp.EmbedCap{Dimension: 4, Identity: "bge", BatchLimit: 7, Encodings: []string{"json", "f32-base64"}}
	if !reflect.DeepEqual(c.Embed, want) {
		t.Errorf("embed %+v want %+v", c.Embed, want)
	}
	c, _ = Derive(fullEvidence(), Policy{EmbedDim: 4})
	if c.Embed.BatchLimit != DefaultEmbedBatchLimit || c.Embed.Identity == "" {
		t.Errorf("embed defaults %+v", c.Embed)
	}
}

func TestDeriveMMRNative(t *testing.T) {
	ev := fullEvidence()
	ev.VectorFields = nil
	c, _ := Derive(ev, Policy{})
	if c.Retrieve.MMR {
		t.Error("mmr advertised without vectors or native MMR")
	}
	ev.NativeMMR = true
	c, _ = Derive(ev, Policy{})
	if !c.Retrieve.MMR {
		t.Error("native MMR not advertised")
	}
}

// TestDeriveRetrieveExtras: units and snapshots are advertised only from
// evidence, and every decision has a reason.
func TestDeriveRetrieveExtras(t *testing.T) {
	rich := fullEvidence()
	rich.Units, rich.Snapshots, rich.NativeRecency = []string{"chunk", "document"}, true, true
	tests := []struct {
		name      string
		ev        *Evidence
		units     []string
		snapshots bool
		recency   bool
	}{
		{name: "plain", ev: fullEvidence()},
		{name: "rich", ev: rich, units: []string{"chunk", "document"}, snapshots: true, recency: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, rs := Derive(tc.ev, Policy{})
			if !slices.Equal(c.Retrieve.Units, tc.units) || c.Retrieve.Snapshots != tc.snapshots {
				t.Errorf("units %v snapshots %t, want %v %t", c.Retrieve.Units, c.Retrieve.Snapshots, tc.units, tc.snapshots)
			}
			if reason(t, rs, "retrieve.units").Advertised != (tc.units != nil) ||
				reason(t, rs, "retrieve.snapshots").Advertised != tc.snapshots ||
				reason(t, rs, "retrieve.recency").Advertised != tc.recency {
				t.Error("reasons disagree with capabilities")
			}
		})
	}
}

// TestDeriveFieldOperators: a field that serves fewer of the advertised
// operators than its type allows is listed with the ones it serves; a
// field that serves them all is not listed.
func TestDeriveFieldOperators(t *testing.T) {
	ev := &Evidence{Engine: "x", TextFields: []TextField{{Name: "body"}},
		FilterFields: []FilterField{
			{Name: "tag", Type: filterlang.TypeKeyword},
			{Name: "title", Type: filterlang.TypeText, Ops: []filterlang.Op{filterlang.OpEq, filterlang.OpNe, filterlang.OpIn, filterlang.OpNin, filterlang.OpExists}},
			{Name: "code", Type: filterlang.TypeKeyword, Ops: []filterlang.Op{filterlang.OpEq, filterlang.OpNe, filterlang.OpIn, filterlang.OpNin, filterlang.OpContains}},
			{Name: "year", Type: filterlang.TypeInt},
		}}
	caps, _ := Derive(ev, Policy{MaxK: 10})
	if caps.Filter == nil {
		t.Fatal("filter not advertised")
	}
	want := map[string][]string{"title": {"eq", "ne", "in", "nin", "exists"}, "code": {"eq", "ne", "in", "nin", "contains"}}
	if !reflect.DeepEqual(caps.Filter.FieldOperators, want) {
		t.Errorf("field operators %v, want %v", caps.Filter.FieldOperators, want)
	}
	if got := caps.Filter.OpsOf("year"); !slices.Equal(got, caps.Filter.Operators) {
		t.Errorf("OpsOf(year) = %v", got)
	}
}

// TestDeriveRerankSources: rerank comes from the sidecar's reranker when
// one is configured, else from the engine's own when the probe proved it;
// a failed one of either kind advertises nothing and says why.
func TestDeriveRerankSources(t *testing.T) {
	sidecar := &RerankerFacts{Method: "cross-encoder", Models: []string{"bge"}, MaxCandidates: 50, Proof: "scored two passages"}
	engine := &RerankerFacts{Method: "cross-encoder", Models: []string{"my-rerank"}, MaxCandidates: 100, Proof: "inference endpoint my-rerank", Via: "Elasticsearch inference endpoint my-rerank"}
	ml := &RerankerFacts{Method: "cross-encoder", Models: []string{"m1"}, MaxCandidates: 40, Proof: "check passed", Via: "OpenSearch ml-commons model m1"}
	broken := &RerankerFacts{Method: "cross-encoder", Failed: "no inference API"}
	mlBroken := &RerankerFacts{Method: "cross-encoder", Failed: "no ml-commons plugin", Via: "OpenSearch ml-commons model m1"}
	tests := []struct {
		name       string
		policy     *RerankerFacts
		native     *RerankerFacts
		stage      bool
		wantModels []string
		wantWhy    string
	}{
		{name: "none", wantWhy: "engine offers none"},
		{name: "sidecar only", policy: sidecar, wantModels: []string{"bge"}, wantWhy: "sidecar"},
		{name: "engine only", native: engine, wantModels: []string{"my-rerank"}, wantWhy: "engine-native cross-encoder reranker, Elasticsearch inference endpoint my-rerank, at most 100 candidates"},
		{name: "engine with stage", native: engine, stage: true, wantModels: []string{"my-rerank"}, wantWhy: "engine-native"},
		{name: "ml-commons model", native: ml, wantModels: []string{"m1"}, wantWhy: "engine-native cross-encoder reranker, OpenSearch ml-commons model m1, at most 40 candidates"},
		{name: "ml-commons model unusable", native: mlBroken, wantWhy: "the engine's OpenSearch ml-commons model m1 is not usable: no ml-commons plugin"},
		{name: "sidecar wins", policy: sidecar, native: engine, wantModels: []string{"bge"}, wantWhy: "sidecar"},
		{name: "engine unusable", native: broken, wantWhy: "no inference API"},
		{name: "sidecar failed, engine ignored", policy: &RerankerFacts{Failed: "refused"}, native: engine, wantWhy: "start-up check failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := fullEvidence()
			ev.NativeReranker, ev.NativeRerankStage = tc.native, tc.stage
			c, rs := Derive(ev, Policy{Reranker: tc.policy})
			got := reason(t, rs, "rerank")
			if !strings.Contains(got.Why, tc.wantWhy) {
				t.Errorf("rerank reason %q, want it to mention %q", got.Why, tc.wantWhy)
			}
			if tc.wantModels == nil {
				if c.Rerank != nil || c.Retrieve.RerankBuiltin || got.Advertised {
					t.Errorf("rerank advertised: %+v", c.Rerank)
				}
				return
			}
			if c.Rerank == nil || !slices.Equal(c.Rerank.Models, tc.wantModels) || !c.Retrieve.RerankBuiltin || !got.Advertised {
				t.Fatalf("rerank %+v builtin %t, want models %v", c.Rerank, c.Retrieve.RerankBuiltin, tc.wantModels)
			}
			builtin := reason(t, rs, "retrieve.rerankBuiltin").Why
			if in := strings.Contains(builtin, "inside the engine"); in != tc.stage {
				t.Errorf("rerankBuiltin reason mentions the engine's search: %t, want %t", in, tc.stage)
			}
			if tc.native != nil && tc.policy == nil && !strings.Contains(builtin, tc.native.Via) {
				t.Errorf("rerankBuiltin reason %q does not name %q", builtin, tc.native.Via)
			}
		})
	}
}

// TestDeriveElementTypes: a vector field is searched only with an
// embedder of its element type, on any engine; otherwise dense (and so
// hybrid) is not advertised and the reason says what to configure.
func TestDeriveElementTypes(t *testing.T) {
	int8Field := func() *Evidence {
		ev := fullEvidence()
		ev.VectorFields[0].Element = ElementInt8
		return ev
	}
	for _, tc := range []struct {
		name   string
		ev     *Evidence
		p      Policy
		dense  bool
		advice string
	}{
		{"float field, float embedder", fullEvidence(), Policy{EmbedDim: 4}, true, ""},
		{"float field, explicit float embedder", fullEvidence(), Policy{EmbedDim: 4, EmbedElement: ElementFloat}, true, ""},
		{"int8 field, int8 embedder", int8Field(), Policy{EmbedDim: 4, EmbedElement: ElementInt8}, true, ""},
		{"int8 field, float embedder", int8Field(), Policy{EmbedDim: 4}, false, "embedder.element_type: int8"},
		{"int8 field, no embedder", int8Field(), Policy{}, false, "embedder.element_type: int8"},
		{"float field, int8 embedder", fullEvidence(), Policy{EmbedDim: 4, EmbedElement: ElementInt8}, false, "embedder.element_type: float"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caps, rs := Derive(tc.ev, tc.p)
			modes := caps.Retrieve.Modes
			if slices.Contains(modes, rcp.ModeDense) != tc.dense || slices.Contains(modes, rcp.ModeHybrid) != tc.dense {
				t.Errorf("modes %v, want dense and hybrid = %t", modes, tc.dense)
			}
			if got := DenseField(tc.ev, tc.p) != nil; got != tc.dense {
				t.Errorf("DenseField found = %t, want %t", got, tc.dense)
			}
			if r := reason(t, rs, "retrieve.modes.dense"); !strings.Contains(r.Why, tc.advice) {
				t.Errorf("dense reason %q lacks %q", r.Why, tc.advice)
			}
		})
	}
}

// TestDeriveFieldPrecision: the filter capability declares the stored
// precision of every advertised float field, next to its type, and the
// reason names the fields that round; fields policy hides carry none.
func TestDeriveFieldPrecision(t *testing.T) {
	half := rcp.FieldPrecision{Stored: rcp.PrecisionHalfFloat}
	scaled := rcp.FieldPrecision{Stored: rcp.PrecisionScaledFloat, ScalingFactor: 100}
	dbl := rcp.FieldPrecision{Stored: rcp.PrecisionDouble}
	ev := &Evidence{Engine: "x", TextFields: []TextField{{Name: "body"}},
		FilterFields: []FilterField{
			{Name: "h", Type: filterlang.TypeFloat, Precision: half},
			{Name: "price", Type: filterlang.TypeFloat, Precision: scaled},
			{Name: "d", Type: filterlang.TypeFloat, Precision: dbl},
			{Name: "hidden", Type: filterlang.TypeFloat, Precision: half},
			{Name: "year", Type: filterlang.TypeInt},
		}}
	caps, reasons := Derive(ev, Policy{MaxK: 10, Fields: []string{"h", "price", "d", "year"}})
	if caps.Filter == nil {
		t.Fatal("filter not advertised")
	}
	want := map[string]rcp.FieldPrecision{"h": half, "price": scaled, "d": dbl}
	if !reflect.DeepEqual(caps.Filter.FieldPrecision, want) {
		t.Errorf("field precision %v, want %v", caps.Filter.FieldPrecision, want)
	}
	why := reason(t, reasons, "filter").Why
	if !strings.Contains(why, "h half_float, price scaled_float(scaling_factor=100)") || !strings.Contains(why, "round alike are equal") {
		t.Errorf("filter reason %q does not state the precisions", why)
	}
}
