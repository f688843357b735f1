package elasticsearch

import (
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/livetest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestLiveByteVectors proves, for every similarity of an element_type
// byte field, that an int8 query vector is sent as integers and that the
// hits and scores are the exact top 10 of an oracle computed in Go over
// the indexed integers: cosine, dot products (byte dot_product through
// 0.5 + dot/(32768·dims)) and 1/(1+d²); and that the scores carry the
// label and floor of capability.ModeScale.
// Repro: RCP_REQUIRE_ENGINES=1 go test -run TestLiveByteVectors ./adapters/elasticsearch/
func TestLiveByteVectors(t *testing.T) {
	docs, queries := livetest.ByteCorpus()
	for _, tc := range []struct {
		sim   string
		exact livetest.Exact
		scale rcp.ScoreScale
		floor *float64
		// tol: _score is a float32; byte dot_product divides by
		// 32768·dims first, so its inversion multiplies one float32 step
		// near 0.5–1 (2⁻²⁴–2⁻²³) by 524288.
		tol livetest.Tolerance
	}{
		{"cosine", livetest.Cosine, rcp.ScaleCosine, new(-1.0), livetest.Tolerance{Value: 1e-6}},
		{"dot_product", livetest.Dot, rcp.ScaleDot, nil, livetest.Tolerance{Value: 0.07}},
		{"max_inner_product", livetest.Dot, rcp.ScaleDot, nil, livetest.Tolerance{Value: 1e-6, Relative: true}},
		{"l2_norm", livetest.L2Score, rcp.ScaleUnbounded, new(0.0), livetest.Tolerance{Value: 1e-6}},
	} {
		t.Run(tc.sim, func(t *testing.T) {
			a := liveByteIndex(t, tc.sim, docs)
			st, err := a.probed()
			if err != nil {
				t.Fatal(err)
			}
			if vf := st.ev.VectorFields; len(vf) != 1 || vf[0].Element != capability.ElementInt8 {
				t.Fatalf("vector fields %+v, want one int8 field", vf)
			}
			livetest.ByteQueries(t, a, "vec", docs, queries, tc.exact, tc.tol, tc.scale, tc.floor)
		})
	}
}

// liveByteIndex creates a one-shard index whose "vec" field is a byte
// dense_vector with similarity sim (hnsw), loads docs and returns the
// probed adapter.
func liveByteIndex(t *testing.T, sim string, docs [][]float32) *adapter {
	t.Helper()
	return liveVecIndex(t, "rcp-byte-"+sim, map[string]any{"type": "dense_vector", "element_type": "byte", "dims": livetest.ByteDims,
		"similarity": sim, "index": true, "index_options": map[string]any{"type": "hnsw"}}, docs)
}
