package elasticsearch

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func filterNames(ev *capability.Evidence) map[string]string {
	out := map[string]string{}
	for _, f := range ev.FilterFields {
		out[f.Name] = string(f.Type)
		if f.Ops != nil {
			out[f.Name] += "(ops)"
		}
	}
	return out
}

func TestProbeRecorded(t *testing.T) {
	for _, tc := range []struct {
		name        string
		index       string
		wantFilters map[string]string
		wantNotes   []string
	}{
		{
			name: "alias with conflict", index: "probe-fixture",
			wantFilters: map[string]string{"draft": "bool", "lang": "keyword", "meta.source": "keyword", "price": "float",
				"published": "date", "title": "text(ops)", "where": "geo", "year": "int"},
			wantNotes: []string{"field rating: conflicting mappings", "field parts: nested", "vector field raw", "native rrf unavailable",
				"filter field text: not offered: no keyword sub-field", "filter field title: contains not offered: title.keyword has ignore_above 256",
				"filter field rating: not offered: indices [probe-fixture-b] vs [probe-fixture-a] map it differently", "filter field url: not offered: index: false"},
		},
		{
			name: "single index", index: "probe-fixture-a",
			wantFilters: map[string]string{"draft": "bool", "lang": "keyword", "meta.source": "keyword", "price": "float",
				"published": "date", "rating": "keyword", "title": "text(ops)", "where": "geo", "year": "int"},
			wantNotes: []string{"field parts: nested"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := probedFake(t, fixtureConfig(tc.index))
			st, _ := a.probed()
			ev := st.ev
			if ev.Version != fixtureVersion || ev.Engine != Name || ev.NativeRRF || ev.QueryInference || ev.Writable || !ev.Pagination ||
				ev.Deterministic || !containsNote(ev.Notes, "1 replica(s)") {
				t.Errorf("evidence flags: %+v", ev)
			}
			// "published" is a date: recency, for lexical stages only.
			if !ev.NativeRecency || !ev.RecencyLexicalOnly {
				t.Errorf("recency evidence: native %t, lexical only %t", ev.NativeRecency, ev.RecencyLexicalOnly)
			}
			if diff := cmp.Diff(tc.wantFilters, filterNames(ev)); diff != "" {
				t.Errorf("filter fields (-want +got):\n%s", diff)
			}
			wantText := []capability.TextField{{Name: "text"}, {Name: "title"}}
			if diff := cmp.Diff(wantText, ev.TextFields); diff != "" {
				t.Errorf("text fields (-want +got):\n%s", diff)
			}
			if len(ev.VectorFields) != 1 || ev.VectorFields[0].Name != "vec" || ev.VectorFields[0].Dims != 8 ||
				ev.VectorFields[0].Similarity != capability.SimCosine {
				t.Errorf("vector fields: %+v", ev.VectorFields)
			}
			if ev.DocCount != 1 || ev.TitleField != "title" || ev.URIField != "url" || st.content != "text" {
				t.Errorf("doc count %d title %q uri %q content %q", ev.DocCount, ev.TitleField, ev.URIField, st.content)
			}
			if st.native["title"] != "title.keyword" {
				t.Errorf("title filters through %q", st.native["title"])
			}
			for _, w := range tc.wantNotes {
				if !containsNote(ev.Notes, w) {
					t.Errorf("no note containing %q in %q", w, ev.Notes)
				}
			}
		})
	}
}

func containsNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func TestProbeConfiguredFields(t *testing.T) {
	cfg := fixtureConfig("probe-fixture-a")
	cfg.TextFields = []FieldConfig{{Name: "title", Boost: 2}, {Name: "lang"}, {Name: "text"}}
	cfg.Writable = true
	a := probedFake(t, cfg)
	st, _ := a.probed()
	want := []capability.TextField{{Name: "title", Boost: 2}, {Name: "text"}}
	if diff := cmp.Diff(want, st.ev.TextFields); diff != "" {
		t.Errorf("text fields (-want +got):\n%s", diff)
	}
	if !containsNote(st.ev.Notes, "configured text field lang") || !st.ev.Writable {
		t.Errorf("notes %q writable %t", st.ev.Notes, st.ev.Writable)
	}
}

func TestProbeWritableNeedsOneIndex(t *testing.T) {
	cfg := fixtureConfig("probe-fixture")
	cfg.Writable = true
	a := probedFake(t, cfg)
	st, _ := a.probed()
	if st.ev.Writable || !containsNote(st.ev.Notes, "writes need exactly one") {
		t.Errorf("writable %t notes %q", st.ev.Writable, st.ev.Notes)
	}
}

func TestProbeMissingIndex(t *testing.T) {
	srv := fakeRecorded(t, aliasRoutes)
	cfg := fixtureConfig("no-such-index")
	cfg.URLs = []string{srv.URL}
	a, err := open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Probe(context.Background())
	if got := a.ErrorCode(err); got != rcp.CodeBackendUnavailable {
		t.Fatalf("code %v for %v", got, err)
	}
	var e *Error
	if !asError(err, &e) || e.Detail() != "index not found: no-such-index" {
		t.Errorf("detail of %v", err)
	}
}

func TestFilterFieldOpsAreAllowed(t *testing.T) {
	a := probedFake(t, fixtureConfig("probe-fixture-a"))
	st, _ := a.probed()
	for _, f := range st.ev.FilterFields {
		for _, op := range f.Ops {
			if !containsOp(filterlang.AllowedOps(f.Type), op) {
				t.Errorf("field %s offers %s, not allowed for %s", f.Name, op, f.Type)
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

// TestProbeRecorded717 probes responses recorded from Elasticsearch
// 7.17 (integ-test-zip: no x-pack, so no dense_vector type, no licence
// endpoint, no rank-rrf): BM25 and typed filters are offered, vectors and
// native RRF are not, and the licence and inference reads fail softly.
func TestProbeRecorded717(t *testing.T) {
	srv := fakeRecordedVersion(t, "7.17.29", aliasRoutes)
	cfg := fixtureConfig("probe-fixture-a")
	cfg.URLs = []string{srv.URL}
	a, err := open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := a.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ev.Version != "7.17.29" || ev.NativeRRF || ev.NativeRerankStage || len(ev.VectorFields) != 0 || !ev.Pagination || ev.DocCount != 1 {
		t.Errorf("evidence: %+v", ev)
	}
	want := map[string]string{"draft": "bool", "lang": "keyword", "meta.source": "keyword", "price": "float",
		"published": "date", "rating": "keyword", "title": "text(ops)", "where": "geo", "year": "int"}
	if diff := cmp.Diff(want, filterNames(ev)); diff != "" {
		t.Errorf("filter fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]capability.TextField{{Name: "text"}, {Name: "title"}}, ev.TextFields); diff != "" {
		t.Errorf("text fields (-want +got):\n%s", diff)
	}
	for _, n := range []string{"native rrf unavailable (rank-rrf module=false", "elasticsearch 7.17.29 (oss)"} {
		if !containsNote(ev.Notes, n) {
			t.Errorf("no note containing %q in %q", n, ev.Notes)
		}
	}
}

// TestKNNFieldsByVersion: a dense_vector field is offered only where the
// search request has a knn section (8.4+, serverless), else noted.
func TestKNNFieldsByVersion(t *testing.T) {
	fields := map[string]field{"vec": {Name: "vec", Type: "dense_vector", Indexed: true, Dims: 8, Element: "float"},
		"text": {Name: "text", Type: "text", Indexed: true}}
	for _, tc := range []struct {
		version, flavor string
		offered         bool
	}{
		{"7.17.29", "default", false}, {"8.3.3", "default", false}, {"8.4.0", "default", true},
		{"8.19.21", "default", true}, {"9.2.0", "default", true}, {"", "serverless", true}, {"", "default", false},
	} {
		ev := &capability.Evidence{}
		got := knnFields(&facts{version: tc.version, flavor: tc.flavor}, fields, ev)
		_, kept := got["vec"]
		if _, text := got["text"]; kept != tc.offered || !text || containsNote(ev.Notes, "no knn search section") == tc.offered {
			t.Errorf("%s/%s: vec kept %t (want %t), text kept %t, notes %q", tc.version, tc.flavor, kept, tc.offered, text, ev.Notes)
		}
	}
}
