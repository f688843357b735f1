package rcp

import (
	"math"
	"unsafe"
)

// Plain vouches that one string is written by AppendJSON exactly as it
// is: it holds none of '"', '\\', '<', '>', '&' or a control character
// and is valid UTF-8 without U+2028 or U+2029. Or, made by
// AssumeEscaped, it vouches for the escaped form AppendJSON writes of a
// string that needs escaping. A reader that walks a string to find its
// end establishes this on the way; carried to the encoder with the
// string, it spares the encoder a second walk. A Plain names the exact
// string it was made for (the address and length of its bytes): on any
// other string, or after the field it vouches for was given another
// value, it vouches for nothing and the string is checked as usual. The
// zero Plain vouches for nothing.
type Plain struct {
	p *byte
	// esc, when set, points to the escN bytes AppendJSON writes between
	// the quotes for the string.
	esc  *byte
	n    int32
	escN int32
}

// AssumePlain returns the Plain for s, taking the caller's word that s
// needs no escaping (see Plain): a caller that has not established it
// would have AppendJSON write invalid or unescaped JSON.
func AssumePlain(s string) Plain {
	if len(s) > math.MaxInt32 {
		return Plain{}
	}
	return Plain{p: unsafe.StringData(s), n: int32(len(s))}
}

// AssumeEscaped returns the Plain for s, taking the caller's word that
// AppendString(nil, s) is exactly escaped between two quotes (as a
// reader finds when a string's escapes are all ones AppendString
// writes). escaped must not change while the Plain is in use.
func AssumeEscaped(s string, escaped []byte) Plain {
	if len(escaped) == 0 || len(s) > math.MaxInt32 || len(escaped) > math.MaxInt32 {
		return Plain{}
	}
	return Plain{p: unsafe.StringData(s), n: int32(len(s)), esc: &escaped[0], escN: int32(len(escaped))}
}

// For reports whether p vouches for s.
func (p Plain) For(s string) bool {
	return p.n > 0 && len(s) == int(p.n) && unsafe.StringData(s) == p.p
}

// body is what AppendJSON writes between the quotes for s, the string p
// vouches for.
func (p Plain) body(s string) string {
	if p.escN > 0 {
		return unsafe.String(p.esc, int(p.escN))
	}
	return s
}

// Equal reports true: a Plain is no part of a hit's value, only work
// spared in writing it, so hits are compared (go-cmp) without it.
func (Plain) Equal(Plain) bool { return true }
