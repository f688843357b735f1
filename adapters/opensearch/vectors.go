package opensearch

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
)

// A knn_vector field can be quantised: an encoder other than flat in
// method.parameters (lucene sq; faiss sq, pq, binary), a compression_level
// above 1x, or mode on_disk (32x binary quantisation by default). The
// engine then scores candidates on compressed vectors, so _score only
// approximates the similarity (measured on 3.5, lucene sq, a clustered
// 96-d corpus: cosine off by up to 0.024, exact top-10 order in 2 of 20
// queries).
// The knn query's rescore option (k-NN 3.1+ for the lucene engine)
// re-scores the candidates with the original vectors, which makes lucene
// sq scores exact (live_vectors_test.go); no other quantisation is proven
// here (faiss has no native libraries on the test node), so those fields
// are reported with approximate scores and labelled unbounded, no floor.

// rescoreSince is the first version whose knn query rescores lucene
// engine results (k-NN 3.1).
var rescoreSince = [2]int{3, 1}

// quantisation describes how the field's vectors are compressed, or ""
// when the engine scores the original float vectors.
func (vi vectorInfo) quantisation() string {
	var parts []string
	if vi.Encoder != "" && vi.Encoder != "flat" {
		parts = append(parts, vi.Engine+" encoder "+vi.Encoder)
	}
	if vi.Compression != "" && vi.Compression != "1x" {
		parts = append(parts, "compression_level "+vi.Compression)
	}
	if vi.Mode == "on_disk" && vi.Compression != "1x" {
		parts = append(parts, "mode on_disk")
	}
	return strings.Join(parts, ", ")
}

// quantKey is the part of a field's signature that must agree across the
// indices behind the target: the same field scored exactly in one index
// and approximately in another has no single score label.
func (vi vectorInfo) quantKey() string { return vi.quantisation() }

// rescorable reports whether the engine rescores the field's quantised
// candidates with the original vectors: only the lucene scalar quantiser,
// alone, on 3.1+ (verified on 3.5).
func (vi vectorInfo) rescorable(v version) bool {
	encoderOnly := (vi.Compression == "" || vi.Compression == "1x") && vi.Mode != "on_disk"
	return vi.Engine == "lucene" && strings.HasPrefix(vi.Encoder, "sq") && encoderOnly &&
		v.atLeast(rescoreSince[0], rescoreSince[1])
}

// approximate reports whether dense scores on the field only approximate
// its similarity.
func (vi vectorInfo) approximate(v version) bool { return vi.quantisation() != "" && !vi.rescorable(v) }

// describeQuantisation records a field's quantisation in its evidence and
// returns a note for the operator, "" when the field is not quantised.
func describeQuantisation(vf *capability.VectorField, vi vectorInfo, v version, number string) string {
	q := vi.quantisation()
	if q == "" {
		vf.Detail["scores"] = "exact"
		return ""
	}
	vf.Detail["quantisation"] = q
	if vi.rescorable(v) {
		vf.Detail["scores"] = "rescored"
		return fmt.Sprintf("vector field %q is quantised (%s): kNN candidates are rescored with the original vectors (knn rescore), so dense scores are exact", vf.Name, q)
	}
	vf.Detail["scores"] = "approximate"
	vf.ApproxScores = true
	why := "rescoring is verified only for the lucene sq encoder"
	if vi.Engine == "lucene" && strings.HasPrefix(vi.Encoder, "sq") {
		why = fmt.Sprintf("opensearch %s cannot rescore lucene results (knn rescore needs %d.%d)", number, rescoreSince[0], rescoreSince[1])
	}
	return fmt.Sprintf("vector field %q is quantised (%s) and %s: dense scores are approximate and reported as unbounded with no floor", vf.Name, q, why)
}

// knnRescore is the knn query's rescore option for a rescorable field:
// oversample_factor 1 rescores every one of the k = candidateK candidates
// the query gathers (the engine's first pass is max(100, k)). Nil when
// the field is not rescored.
func knnRescore(vi vectorInfo, v version) *dsl.KnnRescore {
	if !vi.rescorable(v) {
		return nil
	}
	return &dsl.KnnRescore{OversampleFactor: 1}
}

// planKnnField is the field of a plan body's top-level knn query ("" when
// there is none).
func planKnnField(body json.RawMessage) string {
	raw, ok := dsl.Lookup(body, "query", "knn")
	if !ok {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || len(m) != 1 {
		return ""
	}
	for name := range m {
		return name
	}
	return ""
}
