package rankmath

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"hash"
	"sync"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Cursor format (§10: opaque and server-defined): base64url without padding
// of version(1) ‖ payload JSON ‖ HMAC-SHA256(key, version ‖ payload)[:16].
// A 128-bit tag keeps cursors short while making forgery infeasible. The
// payload is authenticated, not encrypted: put nothing secret in it.
const (
	cursorVersion = 1
	cursorTagLen  = 16
	// MaxCursorLen bounds the accepted cursor length in characters.
	MaxCursorLen = 4096
	cursorField  = "cursor"
)

// SealCursor marshals payload to JSON and seals it into an opaque,
// authenticated cursor string. It fails on an empty key or an
// unmarshalable payload.
func SealCursor(key []byte, payload any) (string, error) {
	if len(key) == 0 {
		return "", errors.New("mapping: seal cursor: empty key")
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return "", err
	}
	var buf [512]byte
	msg := append(append(buf[:0], cursorVersion), body...)
	msg = appendCursorTag(msg, key, msg)
	var out [1024]byte
	return string(base64.RawURLEncoding.AppendEncode(out[:0], msg)), nil
}

// OpenCursor verifies a cursor made by SealCursor with the same key and
// unmarshals its payload into into. Garbage, a wrong key, any tampering or
// a payload that does not fit into is -32602 with data.field "cursor"; an
// empty key is a server fault (-32603).
func OpenCursor(key []byte, cursor string, into any) *rcp.Error {
	if len(key) == 0 {
		return rcp.NewError(rcp.CodeInternalError, "cursor key is not configured")
	}
	bad := rcp.InvalidParams(cursorField, "cursor is invalid or was not issued by this server")
	if len(cursor) > MaxCursorLen {
		return bad
	}
	msg, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(msg) < 1+cursorTagLen || msg[0] != cursorVersion {
		return bad
	}
	signed, tag := msg[:len(msg)-cursorTagLen], msg[len(msg)-cursorTagLen:]
	var want [cursorTagLen]byte
	if !hmac.Equal(tag, appendCursorTag(want[:0], key, signed)) {
		return bad
	}
	dec := json.NewDecoder(bytes.NewReader(signed[1:]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return bad.WithCause(err)
	}
	return nil
}

// appendCursorTag appends the truncated HMAC-SHA256 of msg under key to
// dst. HMAC states are reused per key: sealing happens on every page.
func appendCursorTag(dst, key, msg []byte) []byte {
	p, ok := macs.Load(string(key))
	if !ok {
		k := bytes.Clone(key)
		p, _ = macs.LoadOrStore(string(k), &sync.Pool{New: func() any { return hmac.New(sha256.New, k) }})
	}
	pool := p.(*sync.Pool)
	m := pool.Get().(hash.Hash)
	m.Reset()
	m.Write(msg)
	var sum [sha256.Size]byte
	dst = append(dst, m.Sum(sum[:0])[:cursorTagLen]...)
	pool.Put(m)
	return dst
}

// macs holds a pool of HMAC states per cursor key (a process has one or
// two keys).
var macs sync.Map // string(key) → *sync.Pool of hash.Hash
