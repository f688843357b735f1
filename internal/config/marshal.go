package config

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"
)

// MarshalJSON prints the configuration the way the file is written, so
// `config check` output reads like the file: every time.Duration, in this
// package's structs and in each engine's own settings, as a Go duration
// string ("10s", never nanoseconds), and every key in snake_case. A key is
// the field's json name, else its mapstructure name (the file's key), else
// the field name in snake_case; json's "-", omitempty and omitzero are
// honoured. Values that marshal themselves (Secret: "<secret>") do so.
func (c Config) MarshalJSON() ([]byte, error) {
	return marshal(printable(reflect.ValueOf(c), true))
}

var (
	durationType  = reflect.TypeFor[time.Duration]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

// printable turns v into values encoding/json prints as described on
// Config.MarshalJSON: structs become ordered objects, maps and slices are
// walked, durations become strings. root skips v's own MarshalJSON (the
// caller is it).
func printable(v reflect.Value, root bool) any {
	if !v.IsValid() {
		return nil
	}
	if v.Type() == durationType {
		return time.Duration(v.Int()).String()
	}
	if !root && v.Type().Implements(marshalerType) {
		if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
			return nil
		}
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return printable(v.Elem(), false)
	case reflect.Struct:
		obj := object{}
		appendFields(&obj, v)
		return obj
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			out[keyString(it.Key())] = printable(it.Value(), false)
		}
		return out
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Interface() // []byte: base64, as encoding/json prints it
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = printable(v.Index(i), false)
		}
		return out
	default:
		return v.Interface()
	}
}

// appendFields adds v's exported fields to obj in declaration order;
// untagged embedded structs are inlined, as encoding/json does.
func appendFields(obj *object, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		jsonTag := f.Tag.Get("json")
		if jsonTag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(jsonTag, ",")
		fv := v.Field(i)
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				ft, fv = ft.Elem(), fv.Elem()
			}
			if ft.Kind() == reflect.Struct {
				appendFields(obj, fv)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		optList := strings.Split(opts, ",")
		if slices.Contains(optList, "omitempty") && isEmpty(fv) || slices.Contains(optList, "omitzero") && fv.IsZero() {
			continue
		}
		obj.add(fieldKey(f, name), printable(fv, false))
	}
}

// fieldKey is the printed key of f whose json name is jsonName.
func fieldKey(f reflect.StructField, jsonName string) string {
	if jsonName != "" {
		return jsonName
	}
	if ms, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ","); ms != "" && ms != "-" {
		return ms
	}
	return snakeCase(f.Name)
}

// snakeCase turns a Go identifier into snake_case: "K1" → "k1",
// "PITKeepAlive" → "pit_keep_alive", "CAFile" → "ca_file", "URLs" → "urls".
func snakeCase(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			acronymEnd := i > 0 && unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && !pluralS(rs, i+1)
			if prevLower || acronymEnd {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// pluralS reports whether rs[i] is an acronym's plural "s" ("URLs").
func pluralS(rs []rune, i int) bool {
	return rs[i] == 's' && (i+1 == len(rs) || unicode.IsUpper(rs[i+1]))
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// keyString prints a map key as encoding/json would for string and
// integer keys.
func keyString(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	b, err := json.Marshal(k.Interface())
	if err != nil {
		return k.String()
	}
	return strings.Trim(string(b), `"`)
}

// object is a JSON object that keeps its keys in insertion order.
type object struct {
	keys []string
	vals []any
}

func (o *object) add(k string, v any) { o.keys, o.vals = append(o.keys, k), append(o.vals, v) }

// MarshalJSON implements json.Marshaler.
func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping, so "<secret>" stays legible.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
