package rcp

import "unsafe"

// Plain vouches that one string is written by AppendJSON exactly as it
// is: it holds none of '"', '\\', '<', '>', '&' or a control character
// and is valid UTF-8 without U+2028 or U+2029. A reader that walks a
// string to find its end establishes this on the way; carried to the
// encoder with the string, it spares the encoder a second walk. A Plain
// names the exact string it was made for (the address and length of its
// bytes): on any other string, or after the field it vouches for was
// given another value, it vouches for nothing and the string is checked
// as usual. The zero Plain vouches for nothing.
type Plain struct {
	p *byte
	n int
}

// AssumePlain returns the Plain for s, taking the caller's word that s
// needs no escaping (see Plain): a caller that has not established it
// would have AppendJSON write invalid or unescaped JSON.
func AssumePlain(s string) Plain {
	return Plain{p: unsafe.StringData(s), n: len(s)}
}

// For reports whether p vouches for s.
func (p Plain) For(s string) bool {
	return p.n > 0 && len(s) == p.n && unsafe.StringData(s) == p.p
}

// Equal reports true: a Plain is no part of a hit's value, only work
// spared in writing it, so hits are compared (go-cmp) without it.
func (Plain) Equal(Plain) bool { return true }
