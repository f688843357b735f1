package elasticsearch

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/mapping"
)

// field is a flattened leaf field of one index.
type field struct {
	Name    string
	Type    string // ES type
	Indexed bool
	// Sub is a keyword sub-field of a text field ("title.keyword").
	Sub         string
	IgnoreAbove int
	Dims        int
	Similarity  string
	Element     string
	Inference   string
	// IsSub marks multi-fields themselves.
	IsSub bool

	// IndexType is a dense_vector field's index_options.type as mapped
	// ("" when the mapping does not name it; see vectorIndexes).
	IndexType string
}

// signature is what must agree across indices for a field to be usable.
func (f field) signature() string {
	return fmt.Sprintf("%s/%t/%s/%d/%s/%s", f.Type, f.Indexed, f.Sub, f.Dims, f.Similarity, f.Element)
}

// perIndex flattens every index of the mapping model into its leaf
// fields keyed by dotted name (a text field's multi-fields included,
// marked IsSub); nested objects are reported in notes and skipped (they
// need nested queries), as are runtime fields.
func perIndex(m *mapping.Mapping) (map[string]map[string]field, []string) {
	per := map[string]map[string]field{}
	var notes []string
	for _, ix := range m.Indices {
		out := map[string]field{}
		subs := ix.MultiFields()
		for _, f := range ix.Fields {
			switch {
			case f.Runtime || f.Nested != "" || f.Type == "object":
			case f.Type == "nested":
				notes = append(notes, fmt.Sprintf("field %s: nested objects are not searchable or filterable by this adapter", f.Path))
			case f.MultiOf != "":
				sub := leaf(f, nil)
				sub.IsSub = true
				out[f.Path] = sub
			default:
				out[f.Path] = leaf(f, subs[f.Path])
			}
		}
		per[ix.Name] = out
	}
	return per, slices.Compact(notes)
}

// leaf reads one field of the model, with its multi-fields subs.
func leaf(p mapping.Field, subs []mapping.Field) field {
	f := field{Name: p.Path, Type: p.Type, Indexed: p.Indexed(), IgnoreAbove: intOr0(p.IgnoreAbove),
		Similarity: p.Similarity, Inference: p.InferenceID}
	if v := p.Vector; v != nil {
		f.Dims, f.Similarity, f.Element = v.Dims, v.Similarity, v.Element
	}
	if p.Type == "dense_vector" {
		f.Element, f.Similarity = vectorDefaults(f.Element, f.Similarity)
		f.IndexType = p.Vector.IndexType
	}
	if p.Type == "text" || p.Type == "match_only_text" {
		for _, sp := range subs {
			if sp.Type == "keyword" && sp.Indexed() {
				f.Sub, f.IgnoreAbove = sp.Path, intOr0(sp.IgnoreAbove)
				break
			}
		}
	}
	return f
}

func intOr0(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// vectorDefaults fills dense_vector defaults: element float; similarity
// cosine, or l2_norm for bit vectors.
func vectorDefaults(element, sim string) (string, string) {
	if element == "" {
		element = "float"
	}
	if sim == "" {
		sim = "cosine"
		if element == "bit" {
			sim = "l2_norm"
		}
	}
	return element, sim
}

// mergeFields combines per-index fields. A field whose signature differs
// between indices is dropped and named in a note: serving it would give
// different semantics depending on which index a document lives in.
func mergeFields(per map[string]map[string]field) (map[string]field, []string) {
	merged := map[string]field{}
	seen := map[string]map[string][]string{} // name → signature → indices
	for _, idx := range sortedKeys(per) {
		for name, f := range per[idx] {
			if seen[name] == nil {
				seen[name] = map[string][]string{}
			}
			seen[name][f.signature()] = append(seen[name][f.signature()], idx)
			merged[name] = f
		}
	}
	var notes []string
	for _, name := range sortedKeys(seen) {
		if len(seen[name]) > 1 {
			delete(merged, name)
			notes = append(notes, conflictNote(name, seen[name]))
		}
	}
	return merged, notes
}

func conflictNote(name string, sigs map[string][]string) string {
	parts := make([]string, 0, len(sigs))
	for _, s := range sortedKeys(sigs) {
		parts = append(parts, fmt.Sprintf("%s in [%s]", strings.SplitN(s, "/", 2)[0], strings.Join(sigs[s], ",")))
	}
	return fmt.Sprintf("field %s: conflicting mappings across indices (%s); not offered", name, strings.Join(parts, "; "))
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
