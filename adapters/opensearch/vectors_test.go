package opensearch

import (
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestQuantisation: which knn_vector mappings are quantised, and which of
// those the engine rescores exactly (lucene sq from 3.1).
func TestQuantisation(t *testing.T) {
	v35, v30 := version{3, 5, 0}, version{3, 0, 0}
	tests := []struct {
		name    string
		mapping string
		v       version
		quant   string
		scores  string // Detail["scores"]
	}{
		{"lucene float", `{"type":"knn_vector","dimension":4,"method":{"name":"hnsw","engine":"lucene","space_type":"l2"}}`, v35, "", "exact"},
		{"faiss flat encoder", `{"type":"knn_vector","dimension":4,"method":{"name":"hnsw","engine":"faiss","parameters":{"encoder":{"name":"flat"}}}}`, v35, "", "exact"},
		{"in_memory 1x", `{"type":"knn_vector","dimension":4,"mode":"in_memory","compression_level":"1x"}`, v35, "", "exact"},
		{"lucene sq rescored", `{"type":"knn_vector","dimension":4,"method":{"name":"hnsw","engine":"lucene","space_type":"cosinesimil","parameters":{"encoder":{"name":"sq","parameters":{}}}}}`,
			v35, "lucene encoder sq", "rescored"},
		{"lucene sq before 3.1", `{"type":"knn_vector","dimension":4,"method":{"name":"hnsw","engine":"lucene","parameters":{"encoder":{"name":"sq"}}}}`,
			v30, "lucene encoder sq", "approximate"},
		{"lucene sq with compression", `{"type":"knn_vector","dimension":4,"compression_level":"4x","method":{"name":"hnsw","engine":"lucene","parameters":{"encoder":{"name":"sq"}}}}`,
			v35, "lucene encoder sq, compression_level 4x", "approximate"},
		{"faiss sq fp16", `{"type":"knn_vector","dimension":4,"method":{"name":"hnsw","engine":"faiss","parameters":{"encoder":{"name":"sq","parameters":{"type":"fp16"}}}}}`,
			v35, "faiss encoder sq fp16", "approximate"},
		{"faiss pq", `{"type":"knn_vector","dimension":4,"method":{"name":"ivf","engine":"faiss","parameters":{"encoder":{"name":"pq"}}}}`,
			v35, "faiss encoder pq", "approximate"},
		{"on_disk default", `{"type":"knn_vector","dimension":4,"mode":"on_disk","space_type":"cosinesimil"}`, v35, "mode on_disk", "approximate"},
		{"compression 8x", `{"type":"knn_vector","dimension":4,"compression_level":"8x"}`, v35, "compression_level 8x", "approximate"},
		{"lucene on_disk", `{"type":"knn_vector","dimension":4,"mode":"on_disk","method":{"name":"hnsw","engine":"lucene"}}`, v35, "mode on_disk", "approximate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mapping.Read([]byte(`{"ix":{"mappings":{"properties":{"v":` + tc.mapping + `}}}}`))
			if err != nil {
				t.Fatal(err)
			}
			vi := knnInfo(m.Indices[0].Fields[0].Vector)
			if got := vi.quantisation(); got != tc.quant {
				t.Errorf("quantisation %q, want %q", got, tc.quant)
			}
			vf := capability.VectorField{Name: "v", Detail: map[string]string{}}
			note := describeQuantisation(&vf, vi, tc.v, "x")
			if vf.Detail["scores"] != tc.scores || vf.ApproxScores != (tc.scores == "approximate") || (note != "") != (tc.quant != "") {
				t.Errorf("evidence %+v, note %q", vf, note)
			}
			if rs := knnRescore(vi, tc.v); (rs != nil) != (tc.scores == "rescored") {
				t.Errorf("rescore %+v", rs)
			}
		})
	}
}

// TestApproximateScoresDecoded: dense scores on a field with approximate
// scores are still inverted to the space's similarity (2s−1 for
// cosinesimil) while labelled unbounded with no floor.
func TestApproximateScoresDecoded(t *testing.T) {
	s := recordedSchema(t, quantised("sq", "4x", ""))
	p, err := planFor(testConfig(), s, &adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec8, K: 2, CandidateK: 2}, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Scale != rcp.ScaleUnbounded || p.Floor != nil || planKnnField(p.Body) != "embedding" {
		t.Fatalf("plan scale %s floor %v field %q", p.Scale, p.Floor, planKnnField(p.Body))
	}
	sr, err := dsl.DecodeSearch([]byte(`{"hits":{"hits":[{"_id":"a","_score":0.9},{"_id":"b","_score":0.25}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeHits(s, p, sr)
	if err != nil {
		t.Fatal(err)
	}
	if c.Hits[0].Score != 0.8 || c.Hits[1].Score != -0.5 || c.Scale != rcp.ScaleUnbounded || c.Floor != nil {
		t.Errorf("decoded %+v scale %s floor %v", c.Hits, c.Scale, c.Floor)
	}
	if !strings.Contains(describeQuantisation(&capability.VectorField{Name: "embedding", Detail: map[string]string{}}, s.vectors["embedding"], s.version, "3.5.0"),
		"dense scores are approximate") {
		t.Error("no approximate-scores note")
	}
}
