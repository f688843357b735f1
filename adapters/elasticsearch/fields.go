package elasticsearch

import (
	"fmt"
	"sort"
	"strings"
)

// prop is one mapping property as GET /<idx>/_mapping returns it.
type prop struct {
	Type        string          `json:"type"`
	Index       *bool           `json:"index"`
	Dims        int             `json:"dims"`
	Similarity  string          `json:"similarity"`
	ElementType string          `json:"element_type"`
	IgnoreAbove int             `json:"ignore_above"`
	InferenceID string          `json:"inference_id"`
	Properties  map[string]prop `json:"properties"`
	Fields      map[string]prop `json:"fields"`

	// IndexOptions is how a dense_vector field is indexed (vectors.go).
	IndexOptions *struct {
		Type string `json:"type"`
	} `json:"index_options"`
}

// indexMapping is one entry of a _mapping response.
type indexMapping struct {
	Mappings struct {
		Properties map[string]prop `json:"properties"`
	} `json:"mappings"`
}

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

// flatten walks properties into leaf fields keyed by dotted name; nested
// objects are reported in notes and skipped (they need nested queries).
func flatten(prefix string, props map[string]prop, out map[string]field, notes *[]string) {
	for _, name := range sortedKeys(props) {
		p := props[name]
		full := prefix + name
		switch {
		case p.Type == "nested":
			*notes = append(*notes, fmt.Sprintf("field %s: nested objects are not searchable or filterable by this adapter", full))
		case p.Type == "" || p.Type == "object":
			flatten(full+".", p.Properties, out, notes)
		default:
			out[full] = leaf(full, p)
			for _, sub := range sortedKeys(p.Fields) {
				sp := p.Fields[sub]
				f := leaf(full+"."+sub, sp)
				f.IsSub = true
				out[f.Name] = f
			}
		}
	}
}

func leaf(name string, p prop) field {
	f := field{Name: name, Type: p.Type, Indexed: p.Index == nil || *p.Index, IgnoreAbove: p.IgnoreAbove,
		Dims: p.Dims, Similarity: p.Similarity, Element: p.ElementType, Inference: p.InferenceID}
	if p.Type == "dense_vector" {
		f.Element, f.Similarity = vectorDefaults(p)
		if p.IndexOptions != nil {
			f.IndexType = p.IndexOptions.Type
		}
	}
	if p.Type == "text" || p.Type == "match_only_text" {
		for _, sub := range sortedKeys(p.Fields) {
			if p.Fields[sub].Type == "keyword" && (p.Fields[sub].Index == nil || *p.Fields[sub].Index) {
				f.Sub, f.IgnoreAbove = name+"."+sub, p.Fields[sub].IgnoreAbove
				break
			}
		}
	}
	return f
}

// vectorDefaults fills dense_vector defaults: element float; similarity
// cosine, or l2_norm for bit vectors.
func vectorDefaults(p prop) (element, sim string) {
	element, sim = p.ElementType, p.Similarity
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
