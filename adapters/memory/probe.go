package memory

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Probe reports what the store can serve (see the package doc).
func (s *Store) Probe(ctx context.Context) (*capability.Evidence, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	ev := &capability.Evidence{Engine: "memory", Version: "1", Target: "memory",
		TextFields: []capability.TextField{{Name: FieldTitle, Boost: 1}, {Name: FieldText, Boost: 1}},
		TitleField: FieldTitle, Pagination: true, Deterministic: true, Writable: s.opts.Writable,
		DocCount: int64(len(s.docs))}
	if s.opts.Dims > 0 {
		ev.VectorFields = []capability.VectorField{{Name: FieldEmbedding, Dims: s.opts.Dims,
			Similarity: s.opts.Similarity, Indexed: true, Detail: map[string]string{"search": "exact"}}}
	}
	ev.FilterFields, ev.Notes = s.filterFields()
	return ev, nil
}

// filterFields returns the declared fields, or infers them from metadata
// value types; a key with conflicting types is left out with a note. Nested
// objects are fields by their dotted path ("org.id").
func (s *Store) filterFields() ([]capability.FilterField, []string) {
	types := s.opts.Fields
	var notes []string
	if types == nil {
		types, notes = s.inferTypes()
	}
	out := make([]capability.FilterField, 0, len(types))
	for name, t := range types {
		ff := capability.FilterField{Name: name, Type: t}
		if t == filterlang.TypeFloat {
			// Numbers compare as float64, as the metadata holds them.
			ff.Precision = rcp.FieldPrecision{Stored: rcp.PrecisionDouble}
		}
		out = append(out, ff)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, notes
}

func (s *Store) inferTypes() (map[string]filterlang.FieldType, []string) {
	types := map[string]filterlang.FieldType{}
	bad := map[string]bool{}
	for _, d := range s.docs {
		filterlang.WalkMeta(d.meta, func(k string, v any) {
			if k == s.opts.TitleField || bad[k] {
				return
			}
			t, ok := valueType(v)
			merged, agree := mergeType(types[k], t)
			if !ok || !agree {
				bad[k] = true
				return
			}
			types[k] = merged
		})
	}
	var notes []string
	for k := range bad {
		delete(types, k)
		notes = append(notes, fmt.Sprintf("meta field %q has mixed or unsupported value types; not filterable", k))
	}
	sort.Strings(notes)
	return types, notes
}

// valueType maps a metadata value to a §8 field type.
func valueType(v any) (filterlang.FieldType, bool) {
	switch x := v.(type) {
	case string, []string:
		return filterlang.TypeKeyword, true
	case bool:
		return filterlang.TypeBool, true
	case int, int32, int64:
		return filterlang.TypeInt, true
	case float32, float64:
		if f := toF64(x); f == float64(int64(f)) {
			return filterlang.TypeInt, true
		}
		return filterlang.TypeFloat, true
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return filterlang.TypeInt, true
		}
		return filterlang.TypeFloat, true
	case []any:
		return listType(x)
	}
	return "", false
}

func toF64(v any) float64 {
	if f, ok := v.(float32); ok {
		return float64(f)
	}
	return v.(float64)
}

// listType accepts arrays of strings as keyword (element membership).
func listType(xs []any) (filterlang.FieldType, bool) {
	for _, x := range xs {
		if _, ok := x.(string); !ok {
			return "", false
		}
	}
	return filterlang.TypeKeyword, true
}

// mergeType widens int to float when both appear; other mixes disagree.
func mergeType(prev, t filterlang.FieldType) (filterlang.FieldType, bool) {
	switch {
	case prev == "" || prev == t:
		return t, true
	case (prev == filterlang.TypeInt && t == filterlang.TypeFloat) || (prev == filterlang.TypeFloat && t == filterlang.TypeInt):
		return filterlang.TypeFloat, true
	}
	return prev, false
}

// LoadJSONL reads documents in BEIR shape, one JSON object per line:
// "_id" and "text" (required id), optional "title" and "vector"; every
// other key is metadata. Numbers keep their JSON text (json.Number).
func (s *Store) LoadJSONL(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var docs []adapters.Document
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		d, err := s.parseLine(sc.Bytes())
		if err != nil {
			return fmt.Errorf("memory: line %d: %w", line, err)
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("memory: reading corpus: %w", err)
	}
	return s.Upsert(context.Background(), docs)
}

func (s *Store) parseLine(b []byte) (adapters.Document, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return adapters.Document{}, err
	}
	var d adapters.Document
	if err := json.Unmarshal(raw["_id"], &d.ID); err != nil || d.ID == "" {
		return d, fmt.Errorf("missing or non-string _id")
	}
	if t, ok := raw["text"]; ok {
		if err := json.Unmarshal(t, &d.Text); err != nil {
			return d, fmt.Errorf("text: %w", err)
		}
	}
	if v, ok := raw["vector"]; ok {
		if err := json.Unmarshal(v, &d.Vector); err != nil {
			return d, fmt.Errorf("vector: %w", err)
		}
	}
	delete(raw, "_id")
	delete(raw, "text")
	delete(raw, "vector")
	meta, err := decodeMeta(raw, s.opts.TitleField)
	d.Meta = meta
	return d, err
}

// decodeMeta decodes the remaining keys; BEIR's "title" is stored under
// the configured title field.
func decodeMeta(raw map[string]json.RawMessage, titleField string) (map[string]any, error) {
	if t, ok := raw["title"]; ok && titleField != "title" {
		delete(raw, "title")
		raw[titleField] = t
	}
	meta := make(map[string]any, len(raw))
	for k, v := range raw {
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if x != nil {
			meta[k] = x
		}
	}
	return meta, nil
}
