package mapping

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Qdrant's collection info in the proto3 JSON form of its CollectionInfo
// message (what protojson and Python's json_format write): enum values by
// name, 64-bit integers as strings, default values left out.
type qdrantInfo struct {
	Config struct {
		Params struct {
			VectorsConfig struct {
				Params    *qdrantVector `json:"params"`
				ParamsMap struct {
					Map map[string]qdrantVector `json:"map"`
				} `json:"paramsMap"`
			} `json:"vectorsConfig"`
			SparseVectorsConfig struct {
				Map map[string]struct {
					Modifier enumName `json:"modifier"`
				} `json:"map"`
			} `json:"sparseVectorsConfig"`
		} `json:"params"`
		QuantizationConfig map[string]json.RawMessage `json:"quantizationConfig"`
	} `json:"config"`
	PayloadSchema map[string]struct {
		DataType enumName `json:"dataType"`
	} `json:"payloadSchema"`
}

type qdrantVector struct {
	Size               json.Number                `json:"size"`
	Distance           enumName                   `json:"distance"`
	Datatype           enumName                   `json:"datatype"`
	QuantizationConfig map[string]json.RawMessage `json:"quantizationConfig"`
	MultivectorConfig  *struct {
		Comparator enumName `json:"comparator"`
	} `json:"multivectorConfig"`
}

// ReadQdrant reads the collection info of the Qdrant collection name in
// its proto3 JSON form. The model has one index, the collection: its
// payload indexes are its Fields (Path the dotted name of the index key,
// Key the key, Type the lower-cased data type) and its dense and sparse
// vectors its Vectors (the unnamed vector has Path "").
func ReadQdrant(name string, raw []byte) (*Mapping, error) {
	var info qdrantInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return nil, fmt.Errorf("decode collection info: %w", err)
	}
	ix := Index{Name: name, Fields: []Field{}}
	for _, key := range sortedKeys(info.PayloadSchema) {
		f := Field{Path: key, Key: key, Type: strings.ToLower(string(info.PayloadSchema[key].DataType))}
		if f.Type == "" {
			f.Type = "unknown"
		}
		if p, err := DottedName(key); err != nil {
			f.Problem = err.Error()
		} else {
			f.Path = p
		}
		if f.Path == f.Key {
			f.Key = ""
		}
		ix.Fields = append(ix.Fields, f)
	}
	collQuant := quantization(info.Config.QuantizationConfig)
	vc := info.Config.Params.VectorsConfig
	if vc.Params != nil {
		ix.Vectors = append(ix.Vectors, qdrantDense("", *vc.Params, collQuant))
	}
	for _, n := range sortedKeys(vc.ParamsMap.Map) {
		ix.Vectors = append(ix.Vectors, qdrantDense(n, vc.ParamsMap.Map[n], collQuant))
	}
	sp := info.Config.Params.SparseVectorsConfig.Map
	for _, n := range sortedKeys(sp) {
		ix.Vectors = append(ix.Vectors, Field{Path: n, Type: "sparse_vector", Vector: &Vector{Modifier: strings.ToLower(string(sp[n].Modifier))}})
	}
	m := &Mapping{Indices: []Index{ix}}
	m.merge()
	return m, nil
}

func qdrantDense(name string, p qdrantVector, collQuant string) Field {
	size, _ := p.Size.Int64() // a size that is no integer reads as 0: no usable vector
	v := &Vector{Dims: int(size), Similarity: string(p.Distance), Element: string(p.Datatype), Quantization: quantization(p.QuantizationConfig)}
	if v.Quantization == "" {
		v.Quantization = collQuant
	}
	if p.MultivectorConfig != nil {
		v.Multivector = string(p.MultivectorConfig.Comparator)
		if v.Multivector == "" {
			v.Multivector = "MaxSim" // the enum's zero value, left out of JSON
		}
	}
	return Field{Path: name, Type: "dense_vector", Vector: v}
}

// quantization names a quantization config's kind ("scalar", "product",
// "binary"; "disabled" when switched off for a vector), "" when none.
func quantization(q map[string]json.RawMessage) string {
	ks := sortedKeys(q)
	return strings.Join(ks, ",")
}

// DottedName turns a Qdrant payload index key (a JSON path: "a.b",
// "a[].b", `"a.b"`) into the dotted field name ("a.b" for all three):
// "[]" dropped, quoted keys unquoted. Keys holding quotes or brackets
// themselves are refused.
func DottedName(key string) (string, error) {
	var segs []string
	for rest := key; ; {
		var seg string
		if strings.HasPrefix(rest, `"`) {
			end := strings.Index(rest[1:], `"`)
			if end < 0 {
				return "", fmt.Errorf("unterminated quote in %q", key)
			}
			seg, rest = rest[1:end+1], rest[end+2:]
		} else {
			i := strings.IndexAny(rest, ".[")
			if i < 0 {
				i = len(rest)
			}
			seg, rest = rest[:i], rest[i:]
		}
		if seg == "" || strings.ContainsAny(seg, `"[]\`) {
			return "", fmt.Errorf("path %q is not a dotted name", key)
		}
		rest = strings.TrimPrefix(rest, "[]")
		segs = append(segs, strings.Split(seg, ".")...)
		if rest == "" {
			return strings.Join(segs, "."), nil
		}
		if !strings.HasPrefix(rest, ".") {
			return "", fmt.Errorf("path %q is not a dotted name", key)
		}
		rest = rest[1:]
	}
}

// enumName is a proto3 JSON enum value: its name, or the number of a
// value the reader's schema does not know (kept as its decimal text).
type enumName string

// UnmarshalJSON implements json.Unmarshaler.
func (e *enumName) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*e = enumName(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("enum value %s is neither a name nor a number", b)
	}
	*e = enumName(n)
	return nil
}
