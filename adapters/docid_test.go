package adapters

import (
	"regexp"
	"testing"
)

func TestMintID(t *testing.T) {
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := MintID(), MintID()
	if !v4.MatchString(a) || !v4.MatchString(b) || a == b {
		t.Fatalf("MintID = %q, %q; want two distinct version-4 UUIDs", a, b)
	}
}
