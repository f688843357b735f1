package rcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rcp-sidecar/rcp-sidecar/rcp/internal/jsonscan"
)

// DecodeParams decodes a params object into a new T (§7).
//
//   - Absent or null params decode to the zero T (§4.6 null is absent).
//   - Unknown members, including _meta, are ignored (§4.6, §14.1 item 7).
//   - Member names are case-sensitive (§4.6): unlike encoding/json, a key
//     that differs from a field's json name only by case ({"K":5} for k) is
//     an unknown member and ignored, never bound to the field.
//   - A member of the wrong JSON type, or a non-integer where an integer is
//     expected, is -32602 with data.field set to its path relative to params
//     ("k", "fusion.alpha", "documents[2].text").
func DecodeParams[T any](raw json.RawMessage) (*T, *Error) {
	p := new(T)
	raw = trimJSONSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	if raw[0] != '{' {
		return nil, InvalidParams("params", "params must be an object")
	}
	t := reflect.TypeFor[T]()
	clean, err := conformer{}.conform(raw, t, "")
	if err != nil {
		if _, first := (conformer{custom: true}).conform(raw, t, ""); first != nil {
			return nil, first // the first error in member order
		}
		return nil, err
	}
	if len(clean) != len(raw) && !json.Valid(raw) {
		// members were dropped unparsed: the original must still be JSON
		return nil, InvalidParams("params", "malformed params")
	}
	if uerr := json.Unmarshal(clean, p); uerr != nil {
		// locate the failure: custom types judge their own values
		if _, err := (conformer{custom: true}).conform(raw, t, ""); err != nil {
			return nil, err
		}
		return nil, decodeError(uerr)
	}
	return p, nil
}

// decodeError maps an encoding/json failure that conform did not predict.
func decodeError(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return InvalidParams(te.Field, "%s has the wrong type", te.Field).WithCause(err)
	}
	return InvalidParams("params", "malformed params").WithCause(err)
}

// MaxSafeInt is 2^53, the §4.6 bound on protocol integers: beyond it a
// JSON number is no longer IEEE-754 double-exact, so DecodeParams rejects
// such an integer with -32602 naming its field.
const MaxSafeInt = 1 << 53

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	numberType      = reflect.TypeFor[json.Number]()
)

// shapes tells conform which plain type a custom-unmarshaled RCP type
// decodes an object or array into, so case-sensitivity reaches inside it.
var shapes = map[reflect.Type]func(first byte) reflect.Type{
	reflect.TypeFor[QueryInput](): func(c byte) reflect.Type {
		switch c {
		case '{':
			return reflect.TypeFor[Content]()
		case '[':
			return reflect.TypeFor[[]Content]()
		}
		return nil
	},
	reflect.TypeFor[RerankOption](): func(c byte) reflect.Type {
		if c == '{' {
			return reflect.TypeFor[RerankParams]()
		}
		return nil
	},
}

// conformer walks params against their Go type. The first pass leaves
// values of custom-unmarshaled types to encoding/json; only when decoding
// then fails does a second pass with custom set run each such value's
// UnmarshalJSON, so the error names the value's path (and any failure is
// reported by the full pass, so the first one in member order wins).
type conformer struct{ custom bool }

// conform checks raw against t and returns raw with every member whose name
// matches a field of t only case-insensitively removed.
func (cf conformer) conform(raw json.RawMessage, t reflect.Type, path string) (json.RawMessage, *Error) {
	raw = trimJSONSpace(raw)
	if len(raw) == 0 {
		return raw, InvalidParams(orParams(path), "%s has no value", orParams(path))
	}
	if string(raw) == "null" {
		return raw, nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == rawMessageType:
		return raw, nil
	case t == numberType:
		return raw, expect(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9', path, "a number")
	case reflect.PointerTo(t).Implements(unmarshalerType):
		return cf.conformCustom(raw, t, path)
	}
	return cf.conformKind(raw, t, path)
}

func (cf conformer) conformKind(raw json.RawMessage, t reflect.Type, path string) (json.RawMessage, *Error) {
	c := raw[0]
	switch t.Kind() {
	case reflect.Struct:
		return cf.conformObject(raw, path, structFields(t), nil)
	case reflect.Map:
		return cf.conformObject(raw, path, nil, t.Elem())
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && c == '"' {
			return raw, nil
		}
		return cf.conformArray(raw, t.Elem(), path)
	case reflect.String:
		return raw, expect(c == '"', path, "a string")
	case reflect.Bool:
		return raw, expect(c == 't' || c == 'f', path, "a boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err == nil && (n < -MaxSafeInt || n > MaxSafeInt) {
			return raw, expect(false, path, "an integer within ±2^53 (§4.6)")
		}
		_, err = strconv.ParseInt(string(raw), 10, t.Bits())
		return raw, expect(err == nil, path, "an integer")
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(string(raw), 10, 64)
		if err == nil && n > MaxSafeInt {
			return raw, expect(false, path, "a non-negative integer within 2^53 (§4.6)")
		}
		_, err = strconv.ParseUint(string(raw), 10, t.Bits())
		return raw, expect(err == nil, path, "a non-negative integer")
	case reflect.Float32, reflect.Float64:
		_, err := strconv.ParseFloat(string(raw), t.Bits())
		return raw, expect(c != '"' && err == nil, path, "a number")
	}
	return raw, nil
}

// trimJSONSpace trims the four whitespace bytes JSON allows (RFC 8259 §2),
// and nothing else: bytes.TrimSpace would also eat \f or \v and leave an
// invalid member looking empty.
func trimJSONSpace(b []byte) []byte {
	isWS := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isWS(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func expect(ok bool, path, what string) *Error {
	if ok {
		return nil
	}
	return InvalidParams(path, "%s must be %s", path, what)
}

// conformCustom descends into the known shape of a custom type, then lets
// the type's own UnmarshalJSON judge the value so its errors carry a path.
func (cf conformer) conformCustom(raw json.RawMessage, t reflect.Type, path string) (json.RawMessage, *Error) {
	if shape := shapes[t]; shape != nil {
		if st := shape(raw[0]); st != nil {
			var err *Error
			if raw, err = cf.conform(raw, st, path); err != nil {
				return nil, err
			}
		}
	}
	if !cf.custom {
		return raw, nil
	}
	v := reflect.New(t).Interface().(json.Unmarshaler)
	if err := v.UnmarshalJSON(raw); err != nil {
		return nil, InvalidParams(path, "%s is malformed", path).WithCause(err)
	}
	return raw, nil
}

// conformObject conforms the members of a struct (fields) or of a map
// (fields nil, every member of type elem).
func (cf conformer) conformObject(raw json.RawMessage, path string, fields fieldSet, elem reflect.Type) (json.RawMessage, *Error) {
	if raw[0] != '{' {
		return nil, InvalidParams(path, "%s must be an object", orParams(path))
	}
	var buf [16]member
	kept, changed := buf[:0], false
	it := jsonscan.Object(raw)
	for rawKey, value, ok := it.Next(); ok; rawKey, value, ok = it.Next() {
		ft, known, err := fields.lookup(rawKey, elem)
		if err != nil {
			return nil, InvalidParams(orParams(path), "malformed object").WithCause(err)
		}
		if !known {
			changed = true // unknown or case-folded member: drop (§4.6)
			continue
		}
		v, cerr := cf.conform(value, ft, cf.member(path, rawKey))
		if cerr != nil {
			return nil, cerr
		}
		changed = changed || len(v) != len(value)
		kept = append(kept, member{rawK: rawKey, value: v})
	}
	switch {
	case it.Err() != nil:
		return nil, InvalidParams(orParams(path), "malformed object").WithCause(it.Err())
	case !changed:
		return raw, nil
	}
	return joinObject(kept), nil
}

func (cf conformer) conformArray(raw json.RawMessage, elem reflect.Type, path string) (json.RawMessage, *Error) {
	if raw[0] != '[' {
		return nil, InvalidParams(path, "%s must be an array", path)
	}
	var buf [16][]byte
	parts, changed := buf[:0], false
	it := jsonscan.Array(raw)
	for _, value, ok := it.Next(); ok; _, value, ok = it.Next() {
		v, cerr := cf.conform(value, elem, cf.element(path, len(parts)))
		if cerr != nil {
			return nil, cerr
		}
		changed = changed || len(v) != len(value)
		parts = append(parts, v)
	}
	switch {
	case it.Err() != nil:
		return nil, InvalidParams(path, "malformed array").WithCause(it.Err())
	case !changed:
		return raw, nil
	}
	return append(append([]byte{'['}, bytes.Join(parts, []byte{','})...), ']'), nil
}

// member is the path of the member rawKey below path. Paths only matter
// for errors, so the first pass (which reruns in full on any error) skips
// building them.
func (cf conformer) member(path string, rawKey []byte) string {
	if !cf.custom {
		return ""
	}
	key, _ := jsonscan.Name(rawKey)
	return join(path, key)
}

func (cf conformer) element(path string, i int) string {
	if !cf.custom {
		return ""
	}
	return path + "[" + strconv.Itoa(i) + "]"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orParams(path string) string {
	if path == "" {
		return "params"
	}
	return path
}

// member is one kept object member: its raw key and its conformed value.
type member struct {
	rawK  []byte
	value []byte
}

func joinObject(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m.rawK)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// fieldSet is the exact json names of a struct's fields.
type fieldSet map[string]reflect.Type

// lookup returns the type of the member rawKey: its field's type, or elem
// for a map (fs nil). Plain keys are looked up without allocating.
func (fs fieldSet) lookup(rawKey []byte, elem reflect.Type) (reflect.Type, bool, error) {
	if fs == nil {
		_, err := jsonscan.Name(rawKey) // keys must still decode
		return elem, true, err
	}
	if inner, ok := jsonscan.Plain(rawKey); ok {
		t, known := fs[string(inner)]
		return t, known, nil
	}
	name, err := jsonscan.Name(rawKey)
	t, known := fs[name]
	return t, known, err
}

var fieldCache sync.Map // reflect.Type → fieldSet

func structFields(t reflect.Type) fieldSet {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(fieldSet)
	}
	fs := fieldSet{}
	collectFields(t, fs)
	fieldCache.Store(t, fs)
	return fs
}

func collectFields(t reflect.Type, fs fieldSet) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectFields(ft, fs)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := fs[name]; !dup {
			fs[name] = f.Type
		}
	}
}

// isVerbatim reports whether the inside of a JSON string decodes to itself:
// valid UTF-8 with no escape, quote or control character.
func isVerbatim(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c == '"' || c < 0x20 {
			return false
		}
	}
	return utf8.Valid(b)
}

// MemberNames returns the decoded names of the members of the JSON object
// raw in the order they appear, repeats included, without decoding their
// values; it fails when raw is not an object.
func MemberNames(raw []byte) ([]string, error) {
	raw = trimJSONSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, jsonscan.ErrSyntax
	}
	var names []string
	it := jsonscan.Object(raw)
	for rawKey, _, ok := it.Next(); ok; rawKey, _, ok = it.Next() {
		n, err := jsonscan.Name(rawKey)
		if err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, it.Err()
}
