package rankmath

import (
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestCursorKeysRotate: the first key seals, every key opens, and a key
// taken out of the list opens nothing it sealed.
func TestCursorKeysRotate(t *testing.T) {
	oldK, newK := []byte("old-key-0123456789abcdef01234567"), []byte("new-key-0123456789abcdef01234567")
	in := pageState{Offset: 7, Query: "q"}
	before, err := CursorKeys{oldK}.Seal(in)
	if err != nil {
		t.Fatal(err)
	}
	rotated := CursorKeys{newK, oldK}
	var out pageState
	if err := rotated.Open(before, &out); err != nil || out != in {
		t.Fatalf("a cursor of the old key under the rotated list: %v %+v", err, out)
	}
	after, err := rotated.Seal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := (CursorKeys{newK}).Open(after, &out); err != nil {
		t.Fatalf("the rotated list does not seal with its first key: %v", err)
	}
	if err := (CursorKeys{oldK}).Open(after, &out); err == nil {
		t.Fatal("the old key opened a cursor sealed after the rotation")
	}
	if err := (CursorKeys{newK}).Open(before, &out); err == nil || err.Code != rcp.CodeInvalidParams || err.Data == nil || err.Data.Field != "cursor" {
		t.Fatalf("a removed key's cursor: %+v, want -32602 on cursor", err)
	}
	if err := (CursorKeys{}).Open(before, &out); err == nil || err.Code != rcp.CodeInternalError {
		t.Fatalf("no keys: %+v, want -32603", err)
	}
}

// TestCursorKeysDerive: derived keys depend on the label and on the key,
// keep the order of their source, and are not the source.
func TestCursorKeysDerive(t *testing.T) {
	ks := CursorKeys{[]byte("a-key-0123456789abcdef0123456789"), []byte("b-key-0123456789abcdef0123456789")}
	x, y := ks.Derive("x"), ks.Derive("y")
	if len(x) != 2 || string(x[0]) == string(x[1]) || string(x[0]) == string(y[0]) || string(x[0]) == string(ks[0]) {
		t.Fatalf("derived keys not distinct: %x %x", x, y)
	}
	if again := (CursorKeys{ks[1]}).Derive("x"); string(again[0]) != string(x[1]) {
		t.Fatal("derivation depends on the key's position")
	}
}
