package rankmath

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

type pageState struct {
	Offset int    `json:"o"`
	Query  string `json:"q"`
}

var testKey = []byte("0123456789abcdef0123456789abcdef")

func TestCursorRoundTrip(t *testing.T) {
	in := pageState{Offset: 20, Query: "grüße, \"quoted\""}
	c, err := SealCursor(testKey, in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(c, "+/=") {
		t.Fatalf("cursor %q is not unpadded base64url", c)
	}
	if len(c) > 80 {
		t.Fatalf("cursor is %d chars; keep it small", len(c))
	}
	var out pageState
	if err := OpenCursor(testKey, c, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("got %+v, want %+v", out, in)
	}
}

// flip returns c with one decoded byte XOR-ed.
func flip(c string, i int) string {
	raw, _ := base64.RawURLEncoding.DecodeString(c)
	raw[i] ^= 0x01
	return base64.RawURLEncoding.EncodeToString(raw)
}

func TestOpenCursorRejects(t *testing.T) {
	c, err := SealCursor(testKey, pageState{Offset: 10, Query: "q"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(c)
	other, _ := SealCursor([]byte("another key"), pageState{Offset: 10, Query: "q"})
	wrongShape, _ := SealCursor(testKey, map[string]any{"o": "ten"})
	extraField, _ := SealCursor(testKey, map[string]any{"o": 1, "zz": true})
	tests := []struct{ name, cursor string }{
		{"empty", ""},
		{"garbage", "not a cursor"},
		{"padded", c + "=="},
		{"std alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(c) + "+/"},
		{"version flipped", flip(c, 0)},
		{"payload flipped", flip(c, 3)},
		{"tag flipped", flip(c, len(raw)-1)},
		{"truncated", c[:len(c)-2]},
		{"tag only", base64.RawURLEncoding.EncodeToString(raw[len(raw)-cursorTagLen:])},
		{"other key", other},
		{"payload wrong type", wrongShape},
		{"payload unknown field", extraField},
		{"oversized", strings.Repeat("A", MaxCursorLen+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out pageState
			rcptest.WantError(t, OpenCursor(testKey, tt.cursor, &out), rcp.CodeInvalidParams, "cursor", "")
		})
	}
}

func TestCursorKeyErrors(t *testing.T) {
	if _, err := SealCursor(nil, 1); err == nil {
		t.Fatal("SealCursor with empty key must fail")
	}
	if _, err := SealCursor(testKey, func() {}); err == nil {
		t.Fatal("SealCursor with unmarshalable payload must fail")
	}
	var out int
	if err := OpenCursor(nil, "AQ", &out); err == nil || err.Code != rcp.CodeInternalError {
		t.Fatalf("OpenCursor with empty key = %v, want -32603", err)
	}
}

// FuzzOpenCursor checks OpenCursor never panics, accepts only genuine
// cursors and always reports -32602 "cursor" otherwise.
func FuzzOpenCursor(f *testing.F) {
	good, _ := SealCursor(testKey, pageState{Offset: 5, Query: "x"})
	for _, s := range []string{good, "", "AQ", "AQAAAAAAAAAAAAAAAAAAAAA", good[:len(good)-1], strings.ToUpper(good)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		var out pageState
		err := OpenCursor(testKey, c, &out)
		if err == nil {
			if c != good {
				// A forgery would need the key; only re-encodings of good may pass.
				raw, derr := base64.RawURLEncoding.DecodeString(c)
				graw, _ := base64.RawURLEncoding.DecodeString(good)
				if derr != nil || string(raw) != string(graw) {
					t.Fatalf("accepted forged cursor %q", c)
				}
			}
			return
		}
		if err.Code != rcp.CodeInvalidParams || err.Data == nil || err.Data.Field != "cursor" {
			t.Fatalf("error = %#v", err)
		}
	})
}

// TestCursorFormat: a cursor is base64url(1 ‖ JSON ‖ HMAC-SHA256[:16]),
// computed here with a fresh HMAC for several keys in turn, so that the
// per-key reuse of HMAC states can neither mix keys nor carry state over.
func TestCursorFormat(t *testing.T) {
	keys := [][]byte{[]byte("k1"), []byte("another key"), []byte("k1"), bytes.Repeat([]byte{7}, 100)}
	for i, key := range keys {
		payload := map[string]any{"q": "query", "o": i}
		got, err := SealCursor(key, payload)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(payload)
		msg := append([]byte{1}, body...)
		m := hmac.New(sha256.New, key)
		m.Write(msg)
		want := base64.RawURLEncoding.EncodeToString(append(msg, m.Sum(nil)[:16]...))
		if got != want {
			t.Errorf("key %d: cursor %s, want %s", i, got, want)
		}
		var back map[string]any
		if err := OpenCursor(key, got, &back); err != nil || back["o"] != float64(i) {
			t.Errorf("key %d: open = %v, %v", i, back, err)
		}
		if i > 0 && !bytes.Equal(keys[i-1], key) {
			if err := OpenCursor(keys[i-1], got, &back); err == nil {
				t.Errorf("key %d: cursor opened under key %d", i, i-1)
			}
		}
	}
}
