// Package mapping reads an engine's index mapping once into one typed
// model: every field path with its type and the parameters that decide its
// semantics, per index and merged across the indices behind an alias or
// pattern, with the fields they map differently named as conflicts.
//
// It reads Elasticsearch and OpenSearch GET /<target>/_mapping bodies
// (Read), the index settings a semantic depends on (ReadSettings), and a
// Qdrant collection's vectors and payload indexes (FromQdrant). It is
// pure: it takes bytes or plain values and calls no engine. The adapters,
// their filter analysis and the evidence capability derives from read this
// model; no other package decodes a mapping.
//
// The model records what the engine reports, with no engine defaults
// filled in (a dense_vector without similarity has Similarity ""): the
// defaults depend on the engine version, which the adapter knows.
package mapping

import (
	"encoding/json"
	"slices"
)

// Mapping is the model of the mappings behind one target.
type Mapping struct {
	// Indices are the concrete indices (or the one collection) behind the
	// target, by name.
	Indices []Index `json:"indices"`
	// Fields are the fields every index that maps them maps alike, in path
	// order; a field mapped differently is in Conflicts instead.
	Fields []Field `json:"fields"`
	// Conflicts name the fields whose definitions differ between indices.
	Conflicts []Conflict `json:"conflicts,omitempty"`
}

// Index is one index's mapping.
type Index struct {
	Name string `json:"name"`
	// Fields are every mapped field in tree order: a parent before its
	// properties and multi-fields, siblings by name; runtime fields last.
	Fields []Field `json:"fields"`
	// Vectors are vectors stored beside the document rather than at a
	// path of it (Qdrant's dense and sparse vectors), by name.
	Vectors []Field `json:"vectors,omitempty"`
}

// Conflict is a field the indices behind a target map differently.
type Conflict struct {
	Path string `json:"path"`
	// Groups are the indices that map the field alike, one group per
	// definition.
	Groups [][]string `json:"groups"`
}

// Field is one mapped field path and the parameters that decide its
// semantics. Pointer and empty values mean "not in the mapping".
type Field struct {
	// Path is the dotted path ("a.b", "title.keyword" for a multi-field).
	Path string `json:"path"`
	// Type is the engine's type name; an object mapped without a type is
	// "object".
	Type string `json:"type"`
	// MultiOf is the field whose multi-field (fields) this is; "" otherwise.
	MultiOf string `json:"multi_of,omitempty"`
	// Nested is the nearest nested object enclosing the field ("" when
	// none): it is reached only by nested queries.
	Nested string `json:"nested,omitempty"`
	// Runtime marks a field of the mapping's runtime section.
	Runtime bool `json:"runtime,omitempty"`

	Index           *bool `json:"index,omitempty"`
	DocValues       *bool `json:"doc_values,omitempty"`
	Enabled         *bool `json:"enabled,omitempty"`
	IgnoreAbove     *int  `json:"ignore_above,omitempty"`
	IgnoreMalformed *bool `json:"ignore_malformed,omitempty"`
	// Normalizer is a keyword's normalizer; Analyzer a text field's.
	Normalizer string `json:"normalizer,omitempty"`
	Analyzer   string `json:"analyzer,omitempty"`
	// Similarity is a text field's scoring similarity (BM25, boolean);
	// a vector's is Vector.Similarity.
	Similarity string `json:"similarity,omitempty"`
	// IndexOptions is a text field's postings detail (docs, freqs, …); a
	// vector's index_options is Vector.IndexOptions.
	IndexOptions string `json:"index_options,omitempty"`
	// NullValue is null_value exactly as mapped (JSON).
	NullValue json.RawMessage `json:"null_value,omitempty"`
	// Format is a date's format; Resolution its stored precision
	// (millisecond for date, nanosecond for date_nanos).
	Format     string `json:"format,omitempty"`
	Resolution string `json:"resolution,omitempty"`
	// ScalingFactor is a scaled_float's scaling_factor.
	ScalingFactor float64 `json:"scaling_factor,omitempty"`
	// CopyTo are the fields this one copies its values to.
	CopyTo []string `json:"copy_to,omitempty"`
	// Script: the values are computed by a script.
	Script bool `json:"script,omitempty"`
	// AliasPath is the target of a field alias.
	AliasPath string `json:"alias_path,omitempty"`
	// InferenceID is a semantic_text field's inference endpoint.
	InferenceID string `json:"inference_id,omitempty"`
	// Vector holds the vector parameters, nil for other fields.
	Vector *Vector `json:"vector,omitempty"`

	// Key is the engine's own name of the field when it differs from Path
	// (a Qdrant payload index key such as "a[].b").
	Key string `json:"key,omitempty"`
	// Problem says why Key could not be read as a dotted path ("" when it
	// could); Path is then Key.
	Problem string `json:"problem,omitempty"`
}

// Vector is a vector field's parameters as mapped.
type Vector struct {
	// Dims is dims (Elasticsearch), dimension (OpenSearch) or size (Qdrant).
	Dims int `json:"dims,omitempty"`
	// Similarity is similarity (Elasticsearch), the space_type of the method
	// or else the field (OpenSearch), or the distance (Qdrant).
	Similarity string `json:"similarity,omitempty"`
	// Element is element_type (Elasticsearch), data_type (OpenSearch) or
	// datatype (Qdrant).
	Element string `json:"element,omitempty"`
	// IndexType is index_options.type (Elasticsearch: hnsw, int8_hnsw, …).
	IndexType string `json:"index_type,omitempty"`
	// IndexOptions is index_options as mapped (Elasticsearch).
	IndexOptions json.RawMessage `json:"index_options,omitempty"`
	// Engine, Method, Mode, ModelID, Encoder and Compression are the k-NN
	// plugin's method.engine, method.name, mode, model_id,
	// method.parameters.encoder ("sq fp16") and compression_level
	// (OpenSearch), lower-cased.
	Engine      string `json:"engine,omitempty"`
	Method      string `json:"method,omitempty"`
	Mode        string `json:"mode,omitempty"`
	ModelID     string `json:"model_id,omitempty"`
	Encoder     string `json:"encoder,omitempty"`
	Compression string `json:"compression,omitempty"`
	// Multivector is a Qdrant multivector's comparator ("" for single
	// vectors); Quantization its quantisation; Modifier a sparse vector's
	// modifier (idf).
	Multivector  string `json:"multivector,omitempty"`
	Quantization string `json:"quantization,omitempty"`
	Modifier     string `json:"modifier,omitempty"`
}

// Leaf reports whether f holds values itself: not an object or nested
// container.
func (f Field) Leaf() bool { return f.Type != "object" && f.Type != "nested" }

// Indexed reports whether f is searchable (index is not false).
func (f Field) Indexed() bool { return f.Index == nil || *f.Index }

// Index returns the index named name, or nil.
func (m *Mapping) Index(name string) *Index {
	for i := range m.Indices {
		if m.Indices[i].Name == name {
			return &m.Indices[i]
		}
	}
	return nil
}

// MultiFields returns each field's multi-fields (fields), keyed by the
// field's path, in name order.
func (ix *Index) MultiFields() map[string][]Field {
	out := map[string][]Field{}
	for _, f := range ix.Fields {
		if f.MultiOf != "" {
			out[f.MultiOf] = append(out[f.MultiOf], f)
		}
	}
	return out
}

// Field returns the field at path, or nil.
func (ix *Index) Field(path string) *Field {
	for i := range ix.Fields {
		if ix.Fields[i].Path == path {
			return &ix.Fields[i]
		}
	}
	return nil
}

// merge fills Fields and Conflicts from Indices: a field whose definition
// is the same in every index that maps it is kept once; one that differs
// is named with the indices of each definition.
func (m *Mapping) merge() {
	type group struct {
		f       Field
		indices []string
	}
	byPath := map[string][]*group{}
	var order []string
	for _, ix := range m.Indices {
		for _, f := range ix.Fields {
			gs := byPath[f.Path]
			if gs == nil {
				order = append(order, f.Path)
			}
			key := signature(f)
			i := slices.IndexFunc(gs, func(g *group) bool { return signature(g.f) == key })
			if i < 0 {
				gs = append(gs, &group{f: f})
				i = len(gs) - 1
			}
			gs[i].indices = append(gs[i].indices, ix.Name)
			byPath[f.Path] = gs
		}
	}
	slices.Sort(order)
	m.Fields, m.Conflicts = []Field{}, nil
	for _, p := range order {
		gs := byPath[p]
		if len(gs) == 1 {
			m.Fields = append(m.Fields, gs[0].f)
			continue
		}
		c := Conflict{Path: p}
		for _, g := range gs {
			c.Groups = append(c.Groups, g.indices)
		}
		m.Conflicts = append(m.Conflicts, c)
	}
}

// signature is a field's whole definition.
func signature(f Field) string {
	b, _ := json.Marshal(f) // a Field always marshals
	return string(b)
}
