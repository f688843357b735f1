package rcp

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/rcp-sidecar/rcp-sidecar/rcp/internal/jsonscan"
)

// RawJSON is one metadata value kept as the JSON text an engine sent,
// undecoded: an adapter that reads a search answer in one pass hands the
// members it does not interpret on as spans of that answer instead of
// building Go values only for them to be encoded again. It is written
// exactly as its decoded value would be (objects with their keys sorted
// and the last of a repeated key kept, numbers as float64, strings
// HTML-escaped, see AppendJSON), so a result reads the same whichever form
// its metadata took. Code that looks inside a metadata value reads it
// through MetaValue. A RawJSON aliases the buffer it was cut from, which
// must not change while the value is in use.
type RawJSON []byte

// errRawJSON is the error of a RawJSON that is not one JSON value.
var errRawJSON = errors.New("rcp: RawJSON is not valid JSON")

// maxRawDepth bounds the nesting a RawJSON is written through, as
// encoding/json bounds what it decodes.
const maxRawDepth = 10000

// MarshalJSON writes r as AppendJSON does: the canonical form of its
// decoded value.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	var e jsonAppender
	e.rawJSON(r)
	return e.b, e.err
}

// Value decodes r as encoding/json decodes a value into `any`.
func (r RawJSON) Value() (any, error) {
	var v any
	err := json.Unmarshal(r, &v)
	return v, err
}

// MetaValue returns a metadata value as Go values: a RawJSON decoded as
// encoding/json decodes into `any` (nil when it is malformed), any other
// value as it is. It is the one way to look inside Hit.Meta values.
func MetaValue(v any) any {
	raw, ok := v.(RawJSON)
	if !ok {
		return v
	}
	d, err := raw.Value()
	if err != nil {
		return nil
	}
	return d
}

// rawJSON writes the canonical form of one JSON value given as text.
func (e *jsonAppender) rawJSON(r RawJSON) {
	if r == nil {
		e.raw("null")
		return
	}
	b := trimJSONSpace(r)
	if len(b) == 0 {
		e.fail(errRawJSON)
		return
	}
	e.rawValue(b, 0)
}

func (e *jsonAppender) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// rawValue writes the value b (no surrounding space) at nesting depth.
func (e *jsonAppender) rawValue(b []byte, depth int) {
	if depth >= maxRawDepth {
		e.fail(errRawJSON)
		return
	}
	switch b[0] {
	case '{':
		e.rawObject(b, depth)
	case '[':
		e.raw("[")
		n := 0
		err := jsonscan.EachElement(b, func(_ int, v []byte) error {
			if n++; n > 1 {
				e.raw(",")
			}
			e.rawValue(v, depth+1)
			return nil
		})
		if err != nil {
			e.fail(errRawJSON)
		}
		e.raw("]")
	case '"':
		e.rawString(b)
	case 't', 'f', 'n':
		if s := string(b); s != "true" && s != "false" && s != "null" {
			e.fail(errRawJSON)
		}
		e.b = append(e.b, b...)
	default:
		s := view(b)
		if !isNumber(s) {
			e.fail(errRawJSON)
			e.raw("0")
			return
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			e.fail(err)
		}
		e.float(f, 64)
	}
}

// rawKV is one member of a raw object while its keys are sorted.
type rawKV struct {
	k string
	v []byte
}

// rawObject writes an object as a decoded map is written: keys decoded,
// sorted, the last of equal keys kept.
func (e *jsonAppender) rawObject(b []byte, depth int) {
	var buf [16]rawKV
	kvs := buf[:0]
	err := jsonscan.EachMember(b, func(rawKey, v []byte) error {
		k, err := rawName(rawKey)
		kvs = append(kvs, rawKV{k, v})
		return err
	})
	if err != nil {
		e.fail(errRawJSON)
		e.raw("{}")
		return
	}
	// Stable, so that of equal keys the last is the last of its run.
	if len(kvs) > 12 {
		slices.SortStableFunc(kvs, func(a, b rawKV) int { return strings.Compare(a.k, b.k) })
	} else {
		for i := 1; i < len(kvs); i++ {
			for j := i; j > 0 && kvs[j].k < kvs[j-1].k; j-- {
				kvs[j], kvs[j-1] = kvs[j-1], kvs[j]
			}
		}
	}
	e.raw("{")
	first := true
	for i := range kvs {
		if i+1 < len(kvs) && kvs[i+1].k == kvs[i].k {
			// A later duplicate replaces it, but it is checked as a
			// decoder checks it: written, then taken back.
			mark := len(e.b)
			e.rawValue(kvs[i].v, depth+1)
			e.b = e.b[:mark]
			if e.lastTo > mark {
				e.lastTo = 0 // the float cache pointed into the taken-back text
			}
			continue
		}
		if !first {
			e.raw(",")
		}
		first = false
		e.b = append(appendString(e.b, kvs[i].k), ':')
		e.rawValue(kvs[i].v, depth+1)
	}
	e.raw("}")
}

// rawName decodes a member name; a plain one is viewed in place.
func rawName(rawKey []byte) (string, error) {
	if inner, ok := jsonscan.Plain(rawKey); ok {
		return view(inner), nil
	}
	return jsonscan.Name(rawKey)
}

// rawString writes a JSON string as appendString writes its decoded text.
// Text without escapes, control characters or invalid UTF-8 decodes to
// itself and goes straight to appendString, which copies the runs that
// need no escaping; anything else is decoded by encoding/json first.
func (e *jsonAppender) rawString(b []byte) {
	if len(b) < 2 || b[len(b)-1] != '"' {
		e.fail(errRawJSON)
		return
	}
	inner := b[1 : len(b)-1]
	if plainString(inner) {
		e.b = appendString(e.b, view(inner))
		return
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		e.fail(errRawJSON)
	}
	e.b = appendString(e.b, s)
}

// plainString reports whether a JSON string body decodes to itself: no
// backslash, quote or control character, valid UTF-8.
func plainString(s []byte) bool {
	ascii := true
	for _, c := range s {
		switch {
		case c < 0x20 || c == '\\' || c == '"':
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return ascii || utf8.Valid(s)
}

// view returns b as a string without copying; the string must not
// outlive a change to b (it is only read while b is being written).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
