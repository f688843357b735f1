package rankmath

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

func TestEncodeF32KnownBytes(t *testing.T) {
	// 1.0f = 0x3F800000, -2.0f = 0xC0000000, little-endian.
	want := base64.StdEncoding.EncodeToString([]byte{0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xC0})
	if got := EncodeF32([]float32{1, -2}); got != want {
		t.Fatalf("EncodeF32 = %q, want %q", got, want)
	}
	if got := EncodeF32([]float32{0.5}); got != "AAAAPw==" {
		t.Fatalf("EncodeF32(0.5) = %q, want padded AAAAPw==", got)
	}
}

func TestF32RoundTrip(t *testing.T) {
	vecs := [][]float32{
		{0},
		{1, -1, 0.25, math.MaxFloat32, -math.SmallestNonzeroFloat32},
		{3.14159, 2.71828, 1.41421},
	}
	for _, v := range vecs {
		got, err := DecodeF32(EncodeF32(v), len(v))
		if err != nil {
			t.Fatalf("decode %v: %v", v, err)
		}
		if !slices.Equal(got, v) {
			t.Fatalf("round trip %v → %v", v, got)
		}
		if _, err := DecodeF32(EncodeF32(v), 0); err != nil {
			t.Fatalf("dim 0 must accept any length: %v", err)
		}
	}
}

// blob encodes raw float32 bit patterns.
func blob(bits ...uint32) string {
	buf := make([]byte, 4*len(bits))
	for i, b := range bits {
		binary.LittleEndian.PutUint32(buf[4*i:], b)
	}
	return base64.StdEncoding.EncodeToString(buf)
}

func TestDecodeF32Errors(t *testing.T) {
	two := EncodeF32([]float32{1, 2})
	tests := []struct {
		name, in string
		dim      int
	}{
		{"too short", two, 3},
		{"too long", two, 1},
		{"not multiple of 4", base64.StdEncoding.EncodeToString([]byte{1, 2, 3, 4, 5}), 0},
		{"empty with dim", "", 2},
		{"empty without dim", "", 0},
		{"bad base64", "!!!!", 1},
		{"missing padding", "AAAAPw", 1},
		{"url alphabet", "____", 0},
		{"NaN", blob(0x7FC00000), 1},
		{"+Inf", blob(0x3F800000, 0x7F800000), 2},
		{"-Inf", blob(0xFF800000), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := DecodeF32(tt.in, tt.dim)
			rcptest.WantError(t, err, rcp.CodeInvalidParams, "vector", "")
			if v != nil {
				t.Fatalf("vector returned with error: %v", v)
			}
		})
	}
}
