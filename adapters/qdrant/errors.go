package qdrant

import (
	"context"
	"errors"
	"fmt"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// callError is a failed gRPC call. Its text (server details) is logged by
// the Engine and never sent to clients.
type callError struct {
	op  string
	err error
}

func (e *callError) Error() string { return fmt.Sprintf("qdrant: %s: %v", e.op, e.err) }
func (e *callError) Unwrap() error { return e.err }

// RetryAfterMs implements adapters.RetryAfterer from the `retry-after`
// trailer go-client decodes on ResourceExhausted (seconds).
func (e *callError) RetryAfterMs() int64 {
	var re *qdrantgo.QdrantResourceExhaustedError
	if errors.As(e.err, &re) && re.RetryAfterS > 0 {
		return int64(re.RetryAfterS) * 1000
	}
	return 0
}

var _ adapters.RetryAfterer = (*callError)(nil)

func opErr(op string, err error) error { return &callError{op: op, err: err} }

// grpcCodes maps gRPC status codes to RCP codes (docs/engines.md §4.7). A
// missing collection is the backend being unavailable for this target.
var grpcCodes = map[codes.Code]rcp.Code{
	codes.Unavailable:        rcp.CodeBackendUnavailable,
	codes.FailedPrecondition: rcp.CodeBackendUnavailable,
	codes.NotFound:           rcp.CodeBackendUnavailable,
	codes.DeadlineExceeded:   rcp.CodeTimeout,
	codes.ResourceExhausted:  rcp.CodeRateLimited,
	codes.Unauthenticated:    rcp.CodeUnauthorized,
	codes.PermissionDenied:   rcp.CodeUnauthorized,
	codes.InvalidArgument:    rcp.CodeInvalidParams,
	codes.Canceled:           rcp.CodeCancelled,
	codes.AlreadyExists:      rcp.CodeConflict,
}

// ErrorCode implements adapters.Adapter; never 0.
func (a *adapter) ErrorCode(err error) rcp.Code {
	var re *rcp.Error
	var rl *qdrantgo.QdrantResourceExhaustedError
	switch {
	case err == nil:
		return rcp.CodeInternalError
	case errors.As(err, &re) && re.Code.Valid():
		return re.Code
	case errors.As(err, &rl):
		return rcp.CodeRateLimited
	case errors.Is(err, errClosed):
		return rcp.CodeBackendUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		return rcp.CodeTimeout
	case errors.Is(err, context.Canceled):
		return rcp.CodeCancelled
	}
	if st, ok := grpcStatus(err); ok {
		if c, ok := grpcCodes[st.Code()]; ok {
			return c
		}
	}
	return rcp.CodeInternalError
}

// grpcStatus finds a gRPC status anywhere in err's chain (go-client wraps
// it in *qdrantgo.QdrantError).
func grpcStatus(err error) (*status.Status, bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if st, ok := status.FromError(e); ok && st.Code() != codes.Unknown {
			return st, true
		}
	}
	return nil, false
}
