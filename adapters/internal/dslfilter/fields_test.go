package dslfilter

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// everyParam is one index whose fields carry every mapping parameter that
// changes filter semantics.
const everyParam = `{"ix":{"mappings":{
 "runtime":{"rt":{"type":"keyword"}},
 "properties":{
  "kw":{"type":"keyword"},
  "kw_ia":{"type":"keyword","ignore_above":8},
  "kw_norm":{"type":"keyword","normalizer":"lower"},
  "kw_null":{"type":"keyword","null_value":"NULL"},
  "kw_off":{"type":"keyword","index":false},
  "kw_dv":{"type":"keyword","doc_values":false},
  "kw_script":{"type":"keyword","script":{"source":"emit('x')"}},
  "wc":{"type":"wildcard"},
  "ck":{"type":"constant_keyword","value":"x"},
  "src":{"type":"keyword","copy_to":["all"]},
  "all":{"type":"keyword"},
  "t_plain":{"type":"text"},
  "t_raw":{"type":"text","fields":{"raw":{"type":"keyword"}}},
  "t_dyn":{"type":"text","fields":{"keyword":{"type":"keyword","ignore_above":256}}},
  "t_best":{"type":"text","fields":{"a":{"type":"keyword","ignore_above":10},"b":{"type":"keyword","ignore_above":99},"n":{"type":"keyword","normalizer":"lower"}}},
  "t_norm":{"type":"text","fields":{"n":{"type":"keyword","normalizer":"lower"}}},
  "mot":{"type":"match_only_text","fields":{"raw":{"type":"keyword"}}},
  "l":{"type":"long"},
  "b":{"type":"byte"},
  "ul":{"type":"unsigned_long"},
  "i_null":{"type":"integer","null_value":0},
  "i_bad":{"type":"integer","ignore_malformed":true},
  "f":{"type":"float"},
  "h":{"type":"half_float"},
  "s":{"type":"scaled_float","scaling_factor":100.0},
  "d":{"type":"date"},
  "dn":{"type":"date_nanos"},
  "d_sec":{"type":"date","format":"epoch_second","null_value":"86400"},
  "bo":{"type":"boolean","null_value":false},
  "g":{"type":"geo_point"},
  "al":{"type":"alias","path":"kw"},
  "fl":{"type":"flattened"},
  "ne":{"type":"nested","properties":{"x":{"type":"keyword"}}},
  "obj":{"properties":{"k":{"type":"keyword"},"deep":{"properties":{"n":{"type":"long"}}}}},
  "off":{"type":"object","enabled":false},
  "v":{"type":"dense_vector","dims":3}
 }}}}`

func opsOf(f *Fields) map[string]string {
	out := map[string]string{}
	for _, ff := range f.Filter {
		var ops []string
		for _, op := range ff.AllowedOps() {
			ops = append(ops, string(op))
		}
		out[ff.Name] = string(ff.Type) + " " + strings.Join(ops, ",")
	}
	return out
}

// TestAnalyze: each mapping parameter that changes what the engine
// answers removes exactly the fields or operators it makes inexact, and
// says why.
func TestAnalyze(t *testing.T) {
	const kwAll, textAll = "keyword eq,ne,in,nin,contains,exists", "text eq,ne,in,nin,contains,exists"
	const numAll = "eq,ne,gt,gte,lt,lte,in,nin,exists"
	for _, tc := range []struct {
		name    string
		opt     Options
		ops     map[string]string
		plans   map[string]Field
		notesIn []string
	}{
		{
			name: "elasticsearch", opt: Options{IgnoredField: true},
			ops: map[string]string{
				"kw": kwAll, "kw_ia": kwAll, "kw_null": "keyword eq,ne,in,nin,contains", "kw_dv": kwAll, "wc": kwAll,
				"src":   kwAll,
				"t_raw": textAll, "t_dyn": "text eq,ne,in,nin,exists", "t_best": "text eq,ne,in,nin,exists", "mot": textAll,
				"l": "int " + numAll, "b": "int " + numAll, "i_null": "int eq,ne,gt,gte,lt,lte,in,nin",
				"i_bad": "int " + numAll, "f": "float " + numAll, "h": "float " + numAll, "s": "float " + numAll,
				"d": "date " + numAll, "dn": "date " + numAll, "d_sec": "date eq,ne,gt,gte,lt,lte,in,nin",
				"bo": "bool eq,ne,in,nin", "g": "geo exists", "obj.k": kwAll, "obj.deep.n": "int " + numAll,
			},
			plans: map[string]Field{
				"kw_ia":  {Name: "kw_ia", IgnoreAbove: 8, Ignored: true},
				"t_dyn":  {Name: "t_dyn.keyword", Exists: "t_dyn", IgnoreAbove: 256},
				"t_best": {Name: "t_best.b", Exists: "t_best", IgnoreAbove: 99},
				"i_bad":  {Name: "i_bad", Ints: IntRange{-1 << 31, 1<<31 - 1}, Ignored: true},
				"s":      {Name: "s", Precision: Scaled, Scale: 100},
				"d_sec":  {Name: "d_sec", Millis: true, NullValue: time.Unix(86400, 0).UTC()},
				"dn":     {Name: "dn", Nanos: true},
				"bo":     {Name: "bo", NullValue: false},
				"i_null": {Name: "i_null", Ints: IntRange{-1 << 31, 1<<31 - 1}, NullValue: int64(0)},
			},
			notesIn: []string{
				"filter field kw_norm: not offered: normalizer lower",
				"filter field kw_off: not offered: index: false",
				"filter field kw_script: not offered: its values are computed by a script",
				"filter field ck: not offered: constant_keyword",
				"filter field all: not offered: receives copy_to",
				"filter field t_plain: not offered: no keyword sub-field",
				"filter field t_norm: not offered: keyword sub-field n has normalizer lower",
				"filter field t_dyn: contains not offered: t_dyn.keyword has ignore_above 256",
				"filter field kw_null: exists not offered: null_value",
				"filter field al: not offered: field alias",
				"filter field fl: not offered: flattened",
				"filter field ne: not offered: nested",
				"filter field off: not offered: object with enabled: false",
				"filter field rt: not offered: runtime field",
			},
		},
		{
			name: "opensearch: dropped values are invisible to exists",
			ops:  map[string]string{"kw_ia": "keyword eq,ne,in,nin,contains", "i_bad": "int eq,ne,gt,gte,lt,lte,in,nin", "t_dyn": "text eq,ne,in,nin,exists", "ul": ""},
			plans: map[string]Field{
				"kw_ia": {Name: "kw_ia", IgnoreAbove: 8},
			},
			notesIn: []string{"filter field kw_ia: exists not offered: ignore_above 8: values longer than 8 characters are not indexed and the engine does not record them",
				"filter field ul: not offered: unsigned_long filters are not proven exact"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := analyzeRaw([]byte(everyParam), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			got := opsOf(f)
			for name, want := range tc.ops {
				if got[name] != want {
					t.Errorf("%s: got %q, want %q", name, got[name], want)
				}
			}
			if tc.name == "elasticsearch" {
				for name := range got {
					if _, ok := tc.ops[name]; !ok {
						t.Errorf("%s offered: %q", name, got[name])
					}
				}
			}
			for name, want := range tc.plans {
				if diff := cmp.Diff(want, f.Plan[name]); diff != "" {
					t.Errorf("plan %s (-want +got):\n%s", name, diff)
				}
			}
			for _, w := range tc.notesIn {
				if !containsPrefix(f.Notes, w) {
					t.Errorf("no note starting %q in\n%s", w, strings.Join(f.Notes, "\n"))
				}
			}
		})
	}
}

func containsPrefix(notes []string, p string) bool {
	for _, n := range notes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// TestAnalyzeIndicesDisagree: behind an alias, a field is offered only
// when every index that maps it gives it the same semantics.
func TestAnalyzeIndicesDisagree(t *testing.T) {
	raw := `{"a":{"mappings":{"properties":{"k":{"type":"keyword","ignore_above":5},"n":{"type":"long"},"x":{"type":"keyword"}}}},
	         "b":{"mappings":{"properties":{"k":{"type":"keyword","ignore_above":10},"n":{"type":"long"},"y":{"type":"long"}}}}}`
	f, err := analyzeRaw([]byte(raw), Options{IgnoredField: true})
	if err != nil {
		t.Fatal(err)
	}
	got := opsOf(f)
	if _, ok := got["k"]; ok {
		t.Errorf("k offered although its ignore_above differs: %v", got)
	}
	for _, name := range []string{"n", "x", "y"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s not offered: %v", name, got)
		}
	}
	if !containsPrefix(f.Notes, "filter field k: not offered: indices [") {
		t.Errorf("notes: %q", f.Notes)
	}
}

func TestAnalyzeRejectsBadJSON(t *testing.T) {
	if _, err := analyzeRaw([]byte(`{"ix":`), Options{}); err == nil {
		t.Error("truncated mapping accepted")
	}
}

func TestAllowedOpsAreTypeOps(t *testing.T) {
	// A field whose Ops are narrowed keeps only operators its type allows.
	f, _ := analyzeRaw([]byte(everyParam), Options{})
	for _, ff := range f.Filter {
		for _, op := range ff.AllowedOps() {
			if !containsOp(filterlang.AllowedOps(ff.Type), op) {
				t.Errorf("%s offers %s", ff.Name, op)
			}
		}
	}
}

func containsOp(ops []filterlang.Op, op filterlang.Op) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// TestAnalyzePrecision: every float field carries the precision its
// mapping stores values at; other types carry none.
func TestAnalyzePrecision(t *testing.T) {
	const mapping = `{"i":{"mappings":{"properties":{"d":{"type":"double"},"f":{"type":"float"},"h":{"type":"half_float"},
 "s":{"type":"scaled_float","scaling_factor":20},"l":{"type":"long"},"k":{"type":"keyword"}}}}}`
	f, err := analyzeRaw([]byte(mapping), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]rcp.FieldPrecision{
		"d": {Stored: rcp.PrecisionDouble}, "f": {Stored: rcp.PrecisionFloat}, "h": {Stored: rcp.PrecisionHalfFloat},
		"s": {Stored: rcp.PrecisionScaledFloat, ScalingFactor: 20}, "l": {}, "k": {},
	}
	for _, ff := range f.Filter {
		if ff.Precision != want[ff.Name] {
			t.Errorf("%s: precision %+v, want %+v", ff.Name, ff.Precision, want[ff.Name])
		}
		delete(want, ff.Name)
	}
	if len(want) > 0 {
		t.Errorf("fields not offered: %v", want)
	}
}

// analyzeRaw reads a _mapping body into the mapping model and analyses it.
func analyzeRaw(raw []byte, opt Options) (*Fields, error) {
	m, err := mapping.Read(raw)
	if err != nil {
		return nil, err
	}
	return Analyze(m, opt), nil
}
