package elasticsearch

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func denseVec(typ, element string, dims int) field {
	if element == "" {
		element = "float"
	}
	return field{Name: "vec", Type: "dense_vector", Indexed: true, Dims: dims, Similarity: "cosine", Element: element, IndexType: typ}
}

// TestVectorIndexes: which index types are quantised, which version
// defaults apply when the mapping names none, and when rescore_vector
// makes quantised scores exact (8.18+).
func TestVectorIndexes(t *testing.T) {
	tests := []struct {
		name    string
		version string
		flavor  string
		fields  []field // one per index behind the target
		types   []string
		approx  bool
		rescore bool
	}{
		{"hnsw is exact", "8.19.21", "", []field{denseVec("hnsw", "", 8)}, []string{"hnsw"}, false, false},
		{"flat is exact", "8.19.21", "", []field{denseVec("flat", "", 8)}, []string{"flat"}, false, false},
		{"int8_hnsw rescored on 8.19", "8.19.21", "", []field{denseVec("int8_hnsw", "", 8)}, []string{"int8_hnsw"}, false, true},
		{"int8_hnsw rescored on 8.18", "8.18.0", "", []field{denseVec("int8_hnsw", "", 8)}, []string{"int8_hnsw"}, false, true},
		{"int8_hnsw approximate on 8.17", "8.17.3", "", []field{denseVec("int8_hnsw", "", 8)}, []string{"int8_hnsw"}, true, false},
		{"int4_hnsw on 8.15", "8.15.0", "", []field{denseVec("int4_hnsw", "", 8)}, []string{"int4_hnsw"}, true, false},
		{"bbq_hnsw on 9.1", "9.1.0", "", []field{denseVec("bbq_hnsw", "", 64)}, []string{"bbq_hnsw"}, false, true},
		{"int8_flat", "8.19.21", "", []field{denseVec("int8_flat", "", 8)}, []string{"int8_flat"}, false, true},
		{"int4_flat", "8.17.0", "", []field{denseVec("int4_flat", "", 8)}, []string{"int4_flat"}, true, false},
		{"bbq_flat", "8.19.21", "", []field{denseVec("bbq_flat", "", 64)}, []string{"bbq_flat"}, false, true},
		{"unnamed float on 8.13 is hnsw", "8.13.4", "", []field{denseVec("", "", 8)}, []string{"hnsw (default)"}, false, false},
		{"unnamed float on 8.17 is int8_hnsw", "8.17.0", "", []field{denseVec("", "", 8)}, []string{"int8_hnsw (default)"}, true, false},
		{"unnamed 384-d float on 9.1 is bbq_hnsw", "9.1.2", "", []field{denseVec("", "", 384)}, []string{"bbq_hnsw (default)"}, false, true},
		{"unnamed 128-d float on 9.1 is int8_hnsw", "9.1.2", "", []field{denseVec("", "", 128)}, []string{"int8_hnsw (default)"}, false, true},
		{"unnamed byte is hnsw", "8.19.21", "", []field{denseVec("", "byte", 8)}, []string{"hnsw (default)"}, false, false},
		{"serverless rescores", "8.11.0", "serverless", []field{denseVec("", "", 8)}, []string{"int8_hnsw (default)"}, false, true},
		{"unknown type is approximate", "9.3.0", "", []field{denseVec("int2_hnsw", "", 8)}, []string{"int2_hnsw"}, true, false},
		{"mixed indices, old engine", "8.17.0", "", []field{denseVec("hnsw", "", 8), denseVec("int8_hnsw", "", 8)},
			[]string{"hnsw", "int8_hnsw"}, true, false},
		{"mixed indices, rescoring engine", "8.19.21", "", []field{denseVec("int8_hnsw", "", 8), denseVec("hnsw", "", 8)},
			[]string{"hnsw", "int8_hnsw"}, false, true},
		{"unreadable version cannot rescore", "", "", []field{denseVec("int8_hnsw", "", 8)}, []string{"int8_hnsw"}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			per := map[string]map[string]field{}
			for i, f := range tc.fields {
				per[string(rune('a'+i))] = map[string]field{"vec": f}
			}
			vi := vectorIndexes(per, &facts{version: tc.version, flavor: tc.flavor})["vec"]
			if !slices.Equal(vi.types, tc.types) || vi.approximate() != tc.approx || vi.rescore != tc.rescore {
				t.Errorf("types %q approximate %t rescore %t, want %q %t %t", vi.types, vi.approximate(), vi.rescore, tc.types, tc.approx, tc.rescore)
			}
		})
	}
}

// TestRescoreVector: every num_candidates candidate is rescored
// (ceil(k·oversample) ≥ num_candidates), never with oversample below 1.
func TestRescoreVector(t *testing.T) {
	on := vectorIndex{quantised: true, rescore: true}
	for _, tc := range []struct{ k, nc int }{{10, 100}, {21, 100}, {30, 30}, {1, 10000}, {7, 10}, {10000, 10000}} {
		rv := rescoreVector(on, tc.k, tc.nc)
		if rv == nil || rv.Oversample < 1 || float64(tc.k)*float64(float32(rv.Oversample)) < float64(tc.nc)-1e-3 {
			t.Errorf("k %d nc %d: %+v", tc.k, tc.nc, rv)
		}
	}
	if rv := rescoreVector(vectorIndex{quantised: true}, 10, 100); rv != nil {
		t.Errorf("rescore_vector without engine support: %+v", rv)
	}
}

// TestQuantisedEvidence: the recorded 8.19 mapping has an int8_hnsw
// field; the probe records the quantisation, says it is rescored, and
// plans rescore_vector with the cosine label. The same field on an engine
// without rescore_vector is reported approximate, planned without it and
// labelled unbounded with no floor.
func TestQuantisedEvidence(t *testing.T) {
	a := probedFake(t, fixtureConfig("probe-fixture-a"))
	st, _ := a.probed()
	vf := st.ev.VectorFields[0]
	if vf.ApproxScores || vf.Detail["index_type"] != "int8_hnsw" || vf.Detail["quantisation"] != "int8_hnsw" || vf.Detail["scores"] != "rescored" {
		t.Errorf("vector evidence %+v", vf)
	}
	if !containsNote(st.ev.Notes, "vector field vec is quantised (int8_hnsw): kNN candidates are rescored") {
		t.Errorf("notes %q", st.ev.Notes)
	}
	req := &adapters.SearchRequest{Stage: adapters.StageDense, VectorField: "vec", Vector: vec8(), K: 10, CandidateK: 100}
	for _, tc := range []struct {
		name    string
		vi      vectorIndex
		rescore string
		scale   rcp.ScoreScale
		floor   bool
	}{
		{"rescored", st.vindex["vec"], `"rescore_vector":{"oversample":10}`, rcp.ScaleCosine, true},
		{"not rescorable", vectorIndex{types: []string{"int8_hnsw"}, quantised: true}, "", rcp.ScaleUnbounded, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := *st
			s.vindex = map[string]vectorIndex{"vec": tc.vi}
			p, err := planWith(a.cfg, &s, req, "")
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Knn json.RawMessage `json:"knn"`
			}
			_ = json.Unmarshal(p.Body, &body)
			if got := strings.Contains(string(body.Knn), "rescore_vector"); got != (tc.rescore != "") || (got && !strings.Contains(string(body.Knn), tc.rescore)) {
				t.Errorf("knn %s, want %q", body.Knn, tc.rescore)
			}
			if p.Scale != tc.scale || (p.Floor != nil) != tc.floor {
				t.Errorf("scale %s floor %v", p.Scale, p.Floor)
			}
		})
	}
}
