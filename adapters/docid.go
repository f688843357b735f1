package adapters

import (
	"crypto/rand"
	"fmt"
)

// MintID returns a random RFC 4122 version-4 UUID string: the id a
// Document written without one is stored under. The Engine mints it for
// such documents, and a tenant-prefixing caller mints it the same way so
// its prefix applies to minted ids too.
func MintID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
