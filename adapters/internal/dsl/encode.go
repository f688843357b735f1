package dsl

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// The query clauses write their JSON in one pass into one buffer: a
// clause appends its children by calling their appendJSON, so a nested
// bool tree is encoded once instead of being re-validated and re-compacted
// by encoding/json at every level. The bytes are those encoding/json
// writes for the same clause (map keys sorted, HTML-escaped strings);
// values of types not handled here are encoded by encoding/json.

// appender is a clause that writes its own JSON.
type appender interface {
	appendJSON(b []byte) ([]byte, error)
}

// appendQuery appends q: by its appendJSON when it has one, else as
// encoding/json encodes it (null for a nil q).
func appendQuery(b []byte, q Query) ([]byte, error) {
	if a, ok := q.(appender); ok {
		return a.appendJSON(b)
	}
	return appendMarshal(b, q)
}

// appendQueries appends qs as a JSON array.
func appendQueries(b []byte, qs []Query) ([]byte, error) { return appendArray(b, qs, appendQuery) }

// appendArray appends xs as a JSON array, each element by add.
func appendArray[T any](b []byte, xs []T, add func([]byte, T) ([]byte, error)) ([]byte, error) {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = add(b, x); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendMarshal appends v as encoding/json encodes it.
func appendMarshal(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, j...), nil
}

// appendValue appends a leaf value: strings, booleans, integers and
// floats directly, anything else (times, json.Number, …) by
// encoding/json.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return rcp.AppendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case float64:
		return appendFloat(b, x, 64)
	case float32:
		return appendFloat(b, float64(x), 32)
	}
	return appendMarshal(b, v)
}

// appendFloat appends f as encoding/json encodes a float of bits 32 or
// 64: the shortest decimal that reads back as the same value, in exponent
// form below 1e-6 and from 1e21 on, with a one-digit negative exponent
// written without its leading zero. NaN and ±Inf are refused with
// encoding/json's own error.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		if bits == 32 {
			return appendMarshal(b, float32(f))
		}
		return appendMarshal(b, f)
	}
	if bits == 32 {
		return rcp.AppendFloat32(b, float32(f)), nil
	}
	return rcp.AppendFloat64(b, f), nil
}

// appendOptFloat appends head (a separator and a member name) and *v
// when v is set, nothing when it is nil.
func appendOptFloat(b []byte, head string, v *float64) ([]byte, error) {
	if v == nil {
		return b, nil
	}
	return appendFloat(append(b, head...), *v, 64)
}

// appendFloat32s appends v as a JSON array of numbers (null when v is
// nil, as encoding/json writes a nil slice).
func appendFloat32s(b []byte, v []float32) ([]byte, error) {
	if v == nil {
		return append(b, "null"...), nil
	}
	// room for a typical embedding's numbers ("-0.012345678,") at once
	b = slices.Grow(b, 2+len(v)*13)
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsInf(float64(f), 0) || f != f {
			return appendMarshal(b, f)
		}
		b = rcp.AppendFloat32(b, f)
	}
	return append(b, ']'), nil
}

// appendValues appends vs as a JSON array ([] when vs is nil).
func appendValues(b []byte, vs []any) ([]byte, error) { return appendArray(b, vs, appendValue) }

// appendKey appends "key": for a key known to need no escaping.
func appendKey(b []byte, key string) []byte {
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// member appends "key": after a comma when another member precedes it
// (*sep), and records that one now does.
func member(b []byte, sep *bool, key string) []byte {
	if *sep {
		b = append(b, ',')
	}
	*sep = true
	return appendKey(b, key)
}

// openField appends {"<kind>":{"<field>": — the head of a clause keyed by
// a field name; closeField appends the two closing braces.
func openField(b []byte, kind, field string) []byte {
	b = append(b, '{')
	b = appendKey(b, kind)
	b = append(b, '{')
	b = rcp.AppendString(b, field)
	return append(b, ':')
}

func closeField(b []byte) []byte { return append(b, '}', '}') }

// fieldString appends {"<kind>":{"<field>":{"<key>":s}}}.
func fieldString(b []byte, kind, field, key, s string) []byte {
	b = openField(b, kind, field)
	b = append(b, '{')
	b = appendKey(b, key)
	b = rcp.AppendString(b, s)
	return closeField(append(b, '}'))
}
