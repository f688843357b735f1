package mapping

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// prop is one node of a _mapping properties tree as Elasticsearch and
// OpenSearch send it.
type prop struct {
	Type            string          `json:"type"`
	Index           *bool           `json:"index"`
	DocValues       *bool           `json:"doc_values"`
	Enabled         *bool           `json:"enabled"`
	IgnoreAbove     *int            `json:"ignore_above"`
	IgnoreMalformed *bool           `json:"ignore_malformed"`
	Normalizer      string          `json:"normalizer"`
	Analyzer        string          `json:"analyzer"`
	Similarity      string          `json:"similarity"`
	IndexOptions    json.RawMessage `json:"index_options"`
	NullValue       json.RawMessage `json:"null_value"`
	Format          string          `json:"format"`
	ScalingFactor   float64         `json:"scaling_factor"`
	CopyTo          json.RawMessage `json:"copy_to"`
	Script          json.RawMessage `json:"script"`
	Path            string          `json:"path"`
	InferenceID     string          `json:"inference_id"`
	Properties      map[string]prop `json:"properties"`
	Fields          map[string]prop `json:"fields"`

	// Elasticsearch dense_vector.
	Dims        int    `json:"dims"`
	ElementType string `json:"element_type"`
	// OpenSearch knn_vector.
	Dimension        int    `json:"dimension"`
	SpaceType        string `json:"space_type"`
	DataType         string `json:"data_type"`
	Mode             string `json:"mode"`
	ModelID          string `json:"model_id"`
	CompressionLevel string `json:"compression_level"`
	Method           *struct {
		Name       string `json:"name"`
		Engine     string `json:"engine"`
		SpaceType  string `json:"space_type"`
		Parameters struct {
			Encoder *struct {
				Name       string `json:"name"`
				Parameters struct {
					Type string `json:"type"`
				} `json:"parameters"`
			} `json:"encoder"`
		} `json:"parameters"`
	} `json:"method"`
}

// indexBody is one index's entry in a _mapping body.
type indexBody struct {
	Mappings struct {
		Properties map[string]prop `json:"properties"`
		Runtime    map[string]prop `json:"runtime"`
	} `json:"mappings"`
}

// Read reads an Elasticsearch or OpenSearch GET /<target>/_mapping body:
// an object keyed by index name, each with its mappings.
func Read(raw []byte) (*Mapping, error) {
	var byIndex map[string]indexBody
	if err := json.Unmarshal(raw, &byIndex); err != nil {
		return nil, fmt.Errorf("decode mapping: %w", err)
	}
	m := &Mapping{Indices: []Index{}}
	for _, name := range sortedKeys(byIndex) {
		b := byIndex[name].Mappings
		ix := Index{Name: name, Fields: []Field{}}
		walk(&ix, "", "", b.Properties)
		for _, rn := range sortedKeys(b.Runtime) {
			f := field(rn, b.Runtime[rn])
			f.Runtime = true
			ix.Fields = append(ix.Fields, f)
		}
		m.Indices = append(m.Indices, ix)
	}
	m.merge()
	return m, nil
}

// walk appends every field below props in tree order.
func walk(ix *Index, prefix, nested string, props map[string]prop) {
	for _, name := range sortedKeys(props) {
		p, path := props[name], prefix+name
		f := field(path, p)
		f.Nested = nested
		ix.Fields = append(ix.Fields, f)
		if f.Leaf() {
			for _, sub := range sortedKeys(p.Fields) {
				mf := field(path+"."+sub, p.Fields[sub])
				mf.MultiOf, mf.Nested = path, nested
				ix.Fields = append(ix.Fields, mf)
			}
			continue
		}
		inner := nested
		if f.Type == "nested" {
			inner = path
		}
		walk(ix, path+".", inner, p.Properties)
	}
}

// field reads one property's own parameters.
func field(path string, p prop) Field {
	f := Field{Path: path, Type: p.Type, Index: p.Index, DocValues: p.DocValues, Enabled: p.Enabled,
		IgnoreAbove: p.IgnoreAbove, IgnoreMalformed: p.IgnoreMalformed, Normalizer: p.Normalizer,
		Analyzer: p.Analyzer, Format: p.Format, ScalingFactor: p.ScalingFactor, CopyTo: stringList(p.CopyTo),
		Script: len(p.Script) > 0, AliasPath: p.Path, InferenceID: p.InferenceID}
	if f.Type == "" {
		f.Type = "object"
	}
	if len(p.NullValue) > 0 {
		f.NullValue = append(json.RawMessage(nil), p.NullValue...)
	}
	switch f.Type {
	case "date":
		f.Resolution = "millisecond"
	case "date_nanos":
		f.Resolution = "nanosecond"
	}
	opts := bytes.TrimSpace(p.IndexOptions)
	objectOpts := len(opts) > 0 && opts[0] == '{'
	if objectOpts || isVector(p) {
		f.Vector = vector(p, opts, objectOpts)
	} else {
		f.Similarity = p.Similarity
		_ = json.Unmarshal(opts, &f.IndexOptions) // a string, or left empty
	}
	return f
}

// isVector reports whether a property carries vector parameters.
func isVector(p prop) bool {
	switch p.Type {
	case "dense_vector", "knn_vector", "rank_vectors":
		return true
	}
	return p.Dims != 0 || p.Dimension != 0 || p.ElementType != "" || p.DataType != "" || p.Method != nil
}

// vector reads a vector property; OpenSearch's k-NN values are read
// case-insensitively (3.x echoes data_type upper-cased).
func vector(p prop, opts json.RawMessage, objectOpts bool) *Vector {
	v := &Vector{Dims: p.Dims, Similarity: p.Similarity, Element: p.ElementType, Mode: p.Mode, ModelID: p.ModelID,
		Compression: strings.ToLower(p.CompressionLevel)}
	if p.Dimension != 0 {
		v.Dims = p.Dimension
	}
	if p.SpaceType != "" {
		v.Similarity = strings.ToLower(p.SpaceType)
	}
	if p.DataType != "" {
		v.Element = strings.ToLower(p.DataType)
	}
	if m := p.Method; m != nil {
		v.Method, v.Engine = m.Name, strings.ToLower(m.Engine)
		if m.SpaceType != "" {
			v.Similarity = strings.ToLower(m.SpaceType)
		}
		if e := m.Parameters.Encoder; e != nil {
			v.Encoder = strings.TrimSpace(strings.ToLower(e.Name + " " + e.Parameters.Type))
		}
	}
	if objectOpts {
		v.IndexOptions = append(json.RawMessage(nil), opts...)
		var o struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(opts, &o) // a non-string type is no type
		v.IndexType = o.Type
	}
	return v
}

// stringList decodes a string or an array of strings.
func stringList(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
