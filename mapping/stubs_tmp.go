package mapping

import "github.com/rcp-sidecar/rcp-sidecar/rcp"

// EncodeF32 encodes a vector as base64 little-endian float32 (§7.3.1).
func EncodeF32(v []float32) string { return "" }

// DecodeF32 decodes a base64 little-endian float32 vector (§7.3.1).
func DecodeF32(s string, dim int) ([]float32, *rcp.Error) { return nil, nil }

// SealCursor seals payload into an opaque authenticated cursor.
func SealCursor(key []byte, payload any) (string, error) { return "", nil }

// OpenCursor verifies and decodes a cursor into into.
func OpenCursor(key []byte, cursor string, into any) *rcp.Error { return nil }
