package embedding

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// vectorJSON is one answer's "embedding": an array of numbers, or the
// string a server sends for an "encoding_format": "base64" request,
// which holds the vector's float32 values, little-endian, in standard
// base64 (OpenAI's format). packed says which the server sent.
type vectorJSON struct {
	values numbers
	packed bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *vectorJSON) UnmarshalJSON(b []byte) error {
	b = trimJSONSpace(b)
	if len(b) == 0 || b[0] != '"' {
		v.packed = false
		return v.values.UnmarshalJSON(b)
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	vals, err := unpack([]byte(s))
	if err != nil {
		return err
	}
	v.values, v.packed = vals, true
	return nil
}

// unpack decodes a base64 embedding: standard base64, padded or not,
// without line breaks, whose bytes are whole little-endian float32
// values.
func unpack(s []byte) (numbers, error) {
	enc := base64.StdEncoding
	if len(s)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	raw := make([]byte, enc.DecodedLen(len(s)))
	n, err := enc.Decode(raw, s)
	if err != nil {
		return nil, fmt.Errorf("base64 embedding: %w", err)
	}
	// The decoder skips line breaks; every other byte outside the
	// alphabet is an error. Each skipped byte makes the answer shorter
	// than its length says.
	if want := len(s) * 3 / 4; n != want && n != want-countPad(s) {
		return nil, fmt.Errorf("base64 embedding holds a line break")
	}
	raw = raw[:n]
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("base64 embedding of %d bytes is not a whole number of float32 values", len(raw))
	}
	out := make(numbers, len(raw)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	}
	return out, nil
}

// countPad counts the padding at the end of s.
func countPad(s []byte) int {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '='; i-- {
		n++
	}
	return n
}
