package rankmath

import (
	"encoding/base64"
	"encoding/binary"
	"math"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// vectorField is the data.field of vector decoding errors.
const vectorField = "vector"

// EncodeF32 encodes v as little-endian IEEE-754 binary32, standard base64
// with padding (§7.3.1 "f32-base64").
func EncodeF32(v []float32) string {
	buf := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(buf)
}

// DecodeF32 decodes an "f32-base64" blob (§7.3.1). The blob must be
// padded standard base64 of exactly dim×4 bytes (any non-empty multiple of
// 4 when dim ≤ 0) holding only finite values; anything else is -32602 with
// data.field "vector".
func DecodeF32(s string, dim int) ([]float32, *rcp.Error) {
	raw, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, rcp.InvalidParams(vectorField, "vector is not valid padded base64")
	}
	if err := checkBlobLen(len(raw), dim); err != nil {
		return nil, err
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		x := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, rcp.InvalidParams(vectorField, "vector component %d is not finite", i)
		}
		out[i] = x
	}
	return out, nil
}

// checkBlobLen enforces the §7.3.1 length rule.
func checkBlobLen(n, dim int) *rcp.Error {
	switch {
	case dim > 0 && n != 4*dim:
		return rcp.InvalidParams(vectorField, "vector blob has %d bytes, want %d (dimension %d)", n, 4*dim, dim)
	case n == 0 || n%4 != 0:
		return rcp.InvalidParams(vectorField, "vector blob length %d is not a positive multiple of 4", n)
	}
	return nil
}
