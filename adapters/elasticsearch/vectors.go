package elasticsearch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
)

// Quantised dense_vector indices (index_options.type int8_*, int4_*, bbq_*;
// int8_hnsw is the default for float vectors from 8.14) score kNN
// candidates on compressed vectors, so _score only approximates the
// similarity: on 8.19 int8_hnsw cosine scores were off by up to 0.004 and
// the top-10 order often differed from exact cosine (live_vectors_test.go).
// From 8.18 the knn section's rescore_vector re-scores the best candidates
// with the original float vectors, which makes the returned scores exact.
// Where rescoring is not available the field is reported with approximate
// scores, which the capability layer labels "unbounded" with no floor.

// vectorIndex is how one dense_vector field is indexed behind the target.
type vectorIndex struct {
	// types are the index types across the indices, sorted; a type the
	// mapping does not name is the version's default, suffixed " (default)".
	types []string
	// quantised: some index scores on compressed vectors.
	quantised bool
	// unknown: some index type is neither a known exact nor a known
	// quantised one, so nothing proves its scores exact.
	unknown bool
	// rescore: every quantised index is rescored with the original
	// vectors (rescore_vector, 8.18+), so scores are exact.
	rescore bool
}

// approximate reports whether dense scores on the field only approximate
// its similarity.
func (v vectorIndex) approximate() bool { return v.unknown || (v.quantised && !v.rescore) }

// rescoreSince is the first version whose knn section takes rescore_vector.
var rescoreSince = [2]int{8, 18}

// vectorIndexes reads each dense_vector field's index type in every index
// behind the target.
func vectorIndexes(per map[string]map[string]field, f *facts) map[string]vectorIndex {
	out := map[string]vectorIndex{}
	canRescore := f.flavor == "serverless" || atLeast(f.version, rescoreSince)
	for _, idx := range sortedKeys(per) {
		for name, fd := range per[idx] {
			if fd.Type != "dense_vector" || !fd.Indexed {
				continue
			}
			vi := out[name]
			t := fd.IndexType
			if t == "" {
				t = defaultIndexType(f, fd) + " (default)"
			}
			if !slices.Contains(vi.types, t) {
				vi.types = append(vi.types, t)
				slices.Sort(vi.types)
			}
			switch base := strings.TrimSuffix(t, " (default)"); {
			case quantisedType(base):
				vi.quantised = true
			case base != "hnsw" && base != "flat":
				vi.unknown = true
			}
			vi.rescore = vi.quantised && canRescore
			out[name] = vi
		}
	}
	return out
}

// quantisedType reports whether an index type scores on compressed
// vectors: int8_hnsw, int4_hnsw, bbq_hnsw, int8_flat, int4_flat, bbq_flat
// and later bbq variants.
func quantisedType(t string) bool {
	for _, p := range []string{"int8_", "int4_", "bbq_"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// defaultIndexType is the index type ES gives an indexed dense_vector
// field whose mapping names none: hnsw for byte and bit vectors and before
// 8.14; int8_hnsw for float vectors from 8.14; bbq_hnsw from 9.1 for
// 384 dimensions or more.
func defaultIndexType(f *facts, fd field) string {
	switch {
	case fd.Element != "float" || (f.flavor != "serverless" && !atLeast(f.version, [2]int{8, 14})):
		return "hnsw"
	case (f.flavor == "serverless" || atLeast(f.version, [2]int{9, 1})) && fd.Dims >= 384:
		return "bbq_hnsw"
	}
	return "int8_hnsw"
}

// atLeast reports whether version (major.minor[.patch…]) is at least
// want; an unreadable version is not.
func atLeast(version string, want [2]int) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.SplitN(parts[1], "-", 2)[0])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > want[0] || (major == want[0] && minor >= want[1])
}

// describeVectorIndex records how a field is indexed in its evidence and
// returns a note for the operator when its index is quantised.
func describeVectorIndex(vf *capability.VectorField, vi vectorIndex, version string) string {
	if len(vi.types) == 0 {
		return ""
	}
	types := strings.Join(vi.types, ", ")
	vf.Detail["index_type"] = types
	vf.ApproxScores = vi.approximate()
	switch {
	case vi.unknown:
		vf.Detail["scores"] = "approximate"
		vf.Detail["quantisation"] = types
		return fmt.Sprintf("vector field %s has index type %s, not known to score exactly: dense scores are reported as approximate (unbounded, no floor)", vf.Name, types)
	case !vi.quantised:
		vf.Detail["scores"] = "exact"
		return ""
	case vi.rescore:
		vf.Detail["scores"] = "rescored"
		vf.Detail["quantisation"] = types
		return fmt.Sprintf("vector field %s is quantised (%s): kNN candidates are rescored with the original vectors (rescore_vector), so dense scores are exact", vf.Name, types)
	}
	vf.Detail["scores"] = "approximate"
	vf.Detail["quantisation"] = types
	return fmt.Sprintf("vector field %s is quantised (%s) and elasticsearch %s cannot rescore kNN candidates (rescore_vector needs %d.%d): dense scores are approximate and reported as unbounded with no floor",
		vf.Name, types, version, rescoreSince[0], rescoreSince[1])
}

// rescoreVector asks the engine to rescore every one of the nc kNN
// candidates it gathers for k hits with the original vectors:
// oversample = nc/k (≥ 1, the least ES accepts), so ceil(k·oversample)
// ≥ nc ≥ k candidates are rescored. Nil when the field is not rescored.
func rescoreVector(vi vectorIndex, k, nc int) *dsl.RescoreVector {
	if !vi.rescore || k <= 0 {
		return nil
	}
	return &dsl.RescoreVector{Oversample: max(1, float64(nc)/float64(k))}
}
