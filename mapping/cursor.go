package mapping

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"

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
	msg := append([]byte{cursorVersion}, body...)
	msg = append(msg, cursorTag(key, msg)...)
	return base64.RawURLEncoding.EncodeToString(msg), nil
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
	if !hmac.Equal(tag, cursorTag(key, signed)) {
		return bad
	}
	dec := json.NewDecoder(bytes.NewReader(signed[1:]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return bad.WithCause(err)
	}
	return nil
}

// cursorTag is the truncated HMAC-SHA256 of msg under key.
func cursorTag(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)[:cursorTagLen]
}
