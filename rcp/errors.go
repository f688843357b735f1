package rcp

import (
	"errors"
	"fmt"
	"time"
)

// Code is an RCP/JSON-RPC error code (§12).
type Code int

// Error codes defined by JSON-RPC 2.0 and RCP/1 §12.
const (
	CodeParseError         Code = -32700
	CodeInvalidRequest     Code = -32600
	CodeMethodNotFound     Code = -32601
	CodeInvalidParams      Code = -32602
	CodeInternalError      Code = -32603
	CodeNotInitialized     Code = -32001
	CodeVersionMismatch    Code = -32002
	CodeCapabilityMissing  Code = -32003
	CodeUnknownMethod      Code = -32004
	CodeOptionUnsupported  Code = -32005
	CodeCancelled          Code = -32006
	CodeBackendUnavailable Code = -32010
	CodeRateLimited        Code = -32011
	CodeUnauthorized       Code = -32012
	CodePayloadTooLarge    Code = -32013
	CodeTimeout            Code = -32014
	CodeNotFound           Code = -32015
	CodeConflict           Code = -32016
)

var codeNames = map[Code]string{
	CodeParseError:         "ParseError",
	CodeInvalidRequest:     "InvalidRequest",
	CodeMethodNotFound:     "MethodNotFound",
	CodeInvalidParams:      "InvalidParams",
	CodeInternalError:      "InternalError",
	CodeNotInitialized:     "NotInitialized",
	CodeVersionMismatch:    "VersionMismatch",
	CodeCapabilityMissing:  "CapabilityMissing",
	CodeUnknownMethod:      "UnknownMethod",
	CodeOptionUnsupported:  "OptionUnsupported",
	CodeCancelled:          "Cancelled",
	CodeBackendUnavailable: "BackendUnavailable",
	CodeRateLimited:        "RateLimited",
	CodeUnauthorized:       "Unauthorized",
	CodePayloadTooLarge:    "PayloadTooLarge",
	CodeTimeout:            "Timeout",
	CodeNotFound:           "NotFound",
	CodeConflict:           "Conflict",
}

// String returns the §12 symbol of c, for logs and metric labels.
func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// Valid reports whether c is one of the codes listed in §12.
func (c Code) Valid() bool { _, ok := codeNames[c]; return ok }

// Retryable reports the §12.2 retryability of c.
func (c Code) Retryable() bool {
	switch c {
	case CodeRateLimited, CodeBackendUnavailable, CodeTimeout, CodeInternalError:
		return true
	}
	return false
}

// ErrorData is the conventional error.data object (§12.1).
type ErrorData struct {
	Field        string `json:"field,omitempty"`
	Option       string `json:"option,omitempty"`
	Retryable    *bool  `json:"retryable,omitempty"`
	RetryAfterMs *int64 `json:"retryAfterMs,omitempty"`
	Detail       string `json:"detail,omitempty"`
}

// Error is the one error type of the protocol: everything that reaches a
// client is an *Error (§12). The cause is kept for logs and never serialised.
type Error struct {
	Code    Code       `json:"code"`
	Message string     `json:"message"`
	Data    *ErrorData `json:"data,omitempty"`
	cause   error
}

func (e *Error) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("rcp %s: %s: %v", e.Code, e.Message, e.cause)
	}
	return fmt.Sprintf("rcp %s: %s", e.Code, e.Message)
}

// AdvisesRetry reports whether e's data marks it retryable (false for a
// nil e).
func (e *Error) AdvisesRetry() bool {
	return e != nil && e.Data != nil && e.Data.Retryable != nil && *e.Data.Retryable
}

// RetryAfter is e's retryAfterMs hint as a duration, 0 when absent (or
// for a nil e).
func (e *Error) RetryAfter() time.Duration {
	if e == nil || e.Data == nil || e.Data.RetryAfterMs == nil {
		return 0
	}
	return time.Duration(*e.Data.RetryAfterMs) * time.Millisecond
}

// Unwrap returns the underlying cause (for logs only).
func (e *Error) Unwrap() error { return e.cause }

// Is matches another *Error by code, so errors.Is(err, rcp.ErrTimeout) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// WithCause returns a copy of e that records cause for logging.
func (e *Error) WithCause(cause error) *Error {
	c := *e
	c.cause = cause
	return &c
}

// Sentinels for errors.Is comparisons by code.
var (
	ErrCancelled          = &Error{Code: CodeCancelled, Message: "cancelled"}
	ErrTimeout            = &Error{Code: CodeTimeout, Message: "deadline exceeded"}
	ErrBackendUnavailable = &Error{Code: CodeBackendUnavailable, Message: "backend unavailable"}
)

// NewError builds an *Error with the given code and message.
func NewError(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParams is -32602 with error.data.field set to the offending path.
func InvalidParams(field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...), Data: &ErrorData{Field: field}}
}

// OptionUnsupported is -32005 with error.data.option naming the option value.
func OptionUnsupported(option, format string, args ...any) *Error {
	return &Error{Code: CodeOptionUnsupported, Message: fmt.Sprintf(format, args...), Data: &ErrorData{Option: option}}
}

// Retryable returns -code with data.retryable=true and an optional
// retryAfterMs hint (§12.2); retryAfterMs <= 0 omits the hint.
func Retryable(code Code, retryAfterMs int64, format string, args ...any) *Error {
	t := true
	d := &ErrorData{Retryable: &t}
	if retryAfterMs > 0 {
		d.RetryAfterMs = &retryAfterMs
	}
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Data: d}
}

// AsError converts any error to an *Error: an *Error anywhere in the chain is
// returned as is; anything else becomes -32603 with a generic message (the
// cause is kept for logs, never sent). It never returns code 0.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Code == 0 {
			c := *e
			c.Code = CodeInternalError
			return &c
		}
		return e
	}
	return (&Error{Code: CodeInternalError, Message: "internal error"}).WithCause(err)
}

// WireData returns e.Data as it goes on the wire: with data.retryable
// filled in for the codes §12.2 calls retryable (-32010, -32011, -32014)
// when the producer left it unset, so every such error tells the client it
// may retry. nil when there is nothing to send.
func (e *Error) WireData() *ErrorData {
	switch e.Code {
	case CodeBackendUnavailable, CodeRateLimited, CodeTimeout:
	default:
		return e.Data
	}
	if e.Data != nil && e.Data.Retryable != nil {
		return e.Data
	}
	d := ErrorData{}
	if e.Data != nil {
		d = *e.Data
	}
	t := true
	d.Retryable = &t
	return &d
}
