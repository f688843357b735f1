package rankmath

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// CursorKeys are the keys cursors are sealed and opened with: the first
// seals, every one opens. Rotating a key is putting the new one first and
// keeping the old one after it until the cursors it sealed have expired
// from use; a key removed from the list opens nothing any more.
type CursorKeys [][]byte

// RandomCursorKeys returns one random 32-byte key: cursors that live as
// long as the process.
func RandomCursorKeys() (CursorKeys, error) {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	return CursorKeys{k}, nil
}

// Derive returns, for every key, HMAC-SHA256(key, label): keys for one
// use (label) that reveal nothing of the keys they come from, in the same
// order, so the derived list rotates with its source.
func (ks CursorKeys) Derive(label string) CursorKeys {
	out := make(CursorKeys, len(ks))
	for i, k := range ks {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(label))
		out[i] = m.Sum(nil)
	}
	return out
}

// Seal seals payload with the first key (SealCursor).
func (ks CursorKeys) Seal(payload any) (string, error) {
	if len(ks) == 0 {
		return "", errors.New("mapping: seal cursor: no key")
	}
	return SealCursor(ks[0], payload)
}

// Open opens a cursor sealed by any of the keys (OpenCursor): -32602 on
// "cursor" when none of them sealed it, -32603 without keys.
func (ks CursorKeys) Open(cursor string, into any) *rcp.Error {
	if len(ks) == 0 {
		return OpenCursor(nil, cursor, into)
	}
	var err *rcp.Error
	for _, k := range ks {
		if err = OpenCursor(k, cursor, into); err == nil {
			return nil
		}
	}
	return err
}
