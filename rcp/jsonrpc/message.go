package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Version is the only jsonrpc member value accepted and emitted (§4).
const Version = "2.0"

// JSON-RPC 2.0 codes produced by this package. The full RCP table lives in
// package rcp (§12); these are repeated here so the envelope stays a leaf.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeInvalidParams  = -32602
)

// Request is a call (ID present) or a notification (ID absent). Params is
// nil when absent or null (§4.6 null is absent).
type Request struct {
	ID     ID
	Method string
	Params json.RawMessage
}

// IsNotification reports whether r carries no id and must not be answered (§4.5).
func (r *Request) IsNotification() bool { return r.ID.IsAbsent() }

// WireError is the JSON-RPC error object (§12).
type WireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *WireError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Response is a success (Result set) or an error (Error set) for ID.
type Response struct {
	ID     ID
	Result json.RawMessage
	Error  *WireError
}

// DecodeError is a frame or member that is not a valid message. Field names
// the offending params path for CodeInvalidParams.
type DecodeError struct {
	Code    int
	Message string
	Field   string
}

func (e *DecodeError) Error() string { return fmt.Sprintf("jsonrpc decode %d: %s", e.Code, e.Message) }

type wireRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *ID             `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *WireError      `json:"error,omitempty"`
}

// ErrUnsafeFrame reports an encoded frame that would break NDJSON framing.
var ErrUnsafeFrame = errors.New("jsonrpc: encoded frame contains a newline")

// EncodeRequest returns the compact single-line encoding of r.
func EncodeRequest(r *Request) ([]byte, error) {
	w := wireRequest{JSONRPC: Version, Method: r.Method, Params: r.Params}
	if !r.ID.IsAbsent() {
		id := r.ID
		w.ID = &id
	}
	return encode(w)
}

// EncodeResponse returns the compact single-line encoding of r. A response
// with neither Result nor Error gets an empty result object.
func EncodeResponse(r *Response) ([]byte, error) {
	w := wireResponse{JSONRPC: Version, ID: r.ID, Result: r.Result, Error: r.Error}
	if r.ID.IsAbsent() {
		w.ID = NullID
	}
	if w.Error == nil && len(w.Result) == 0 {
		w.Result = json.RawMessage("{}")
	}
	return encode(w)
}

// ErrResultNotObject reports a result that does not encode as a JSON
// object; every RCP/1 result is one (§7).
var ErrResultNotObject = errors.New("jsonrpc: result is not a JSON object")

// EncodeResult marshals v as the result of a response to id and returns the
// compact single-line frame, with spare capacity for a trailing newline.
// The frame's buffer comes from a pool: pass it to ReleaseFrame once it
// has been written to let the next frame reuse it.
// The result is encoded once, straight into the envelope: encoding/json
// refuses NaN and ±Inf (§4.6) and escapes every newline inside strings, and
// a newline anywhere in the frame is still refused (§5.1).
func EncodeResult(id ID, v any) ([]byte, error) {
	bp := getBuffer()
	keep := true
	defer func() {
		if keep {
			putBuffer(bp)
		}
	}()
	if id.IsAbsent() {
		id = NullID
	}
	b := append(append(append((*bp)[:0], `{"jsonrpc":"2.0","id":`...), id.raw...), `,"result":`...)
	start := len(b)
	b, err := appendResult(b, v)
	*bp = b // keep the grown buffer for the next frame
	if err != nil {
		return nil, err
	}
	if len(b) == start || b[start] != '{' {
		return nil, ErrResultNotObject
	}
	if bytes.IndexByte(b[start:], '\n') >= 0 || bytes.IndexByte(b[start:], '\r') >= 0 {
		return nil, ErrUnsafeFrame
	}
	b = append(b, '}')
	if len(b) == cap(b) {
		b = append(b, '\n')[:len(b)] // room for the transport's newline
	}
	keep = false // the frame now owns the buffer (see ReleaseFrame)
	return b, nil
}

// ReleaseFrame hands a frame returned by EncodeResult (or any frame the
// caller owns) back for reuse once it has been written. The caller must not
// touch frame afterwards; releasing is optional.
func ReleaseFrame(frame []byte) {
	if cap(frame) > 0 && cap(frame) <= maxPooledBuffer {
		frame = frame[:0]
		buffers.Put(&frame)
	}
}

// Appender is implemented by result types that encode themselves without
// reflection. AppendJSON must append exactly what encoding/json.Marshal
// would produce for the value (compact, no NaN or ±Inf) or fail.
type Appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

func appendResult(b []byte, v any) ([]byte, error) {
	if a, ok := v.(Appender); ok {
		return a.AppendJSON(b)
	}
	m, err := json.Marshal(v)
	return append(b, m...), err
}

// buffers recycles encoding buffers across frames; oversized ones are
// dropped so one huge result does not pin memory.
var buffers = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledBuffer = 1 << 20

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) <= maxPooledBuffer {
		buffers.Put(b)
	}
}

// EncodeBatch encodes already-encoded members as one JSON array.
func EncodeBatch(members [][]byte) []byte {
	return append(append([]byte{'['}, bytes.Join(members, []byte{','})...), ']')
}

// Marshal encodes v compactly; NaN and ±Inf are refused by encoding/json
// (§4.6), and an embedded newline is refused here (§5.1).
func Marshal(v any) ([]byte, error) { return encode(v) }

func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(b, '\n') >= 0 || bytes.IndexByte(b, '\r') >= 0 {
		return nil, ErrUnsafeFrame
	}
	return b, nil
}
