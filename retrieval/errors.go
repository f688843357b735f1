package retrieval

import (
	"context"
	"errors"
	"log/slog"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// wrap is the single error boundary of the Engine (docs/ARCHITECTURE.md §2.5):
// *rcp.Error passes unchanged; a done ctx decides between -32014 (deadline)
// and -32006 (cancel); anything else is classified by the adapter, marked
// retryable per §12.2 and given a generic message. The engine's own text is
// logged, never sent (§15).
func (e *Engine) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var re *rcp.Error
	if errors.As(err, &re) {
		return rcp.AsError(re)
	}
	if ce := ctxError(ctx, err); ce != nil {
		return ce
	}
	code := e.a.ErrorCode(err)
	if !code.Valid() || code == 0 {
		code = rcp.CodeInternalError
	}
	e.log.LogAttrs(ctx, levelFor(code), "engine error", slogAttrs(code, err)...)
	out := classified(code, err)
	rcp.ReporterFrom(ctx).Log("warning", "engine", "engine error: "+code.String(), map[string]any{"code": int(code)})
	return out
}

// ctxError maps a finished context (or a bare context error) to -32014 or
// -32006 (§13.1, §7.14); nil when the context is not the cause.
func ctxError(ctx context.Context, err error) *rcp.Error {
	cerr := ctx.Err()
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, rcp.ErrTimeout), errors.Is(cerr, context.DeadlineExceeded):
		return rcp.Retryable(rcp.CodeTimeout, 0, "deadline exceeded").WithCause(err)
	case errors.Is(cause, rcp.ErrCancelled), cerr != nil:
		return rcp.NewError(rcp.CodeCancelled, "request cancelled").WithCause(err)
	case errors.Is(err, context.DeadlineExceeded):
		return rcp.Retryable(rcp.CodeTimeout, 0, "deadline exceeded").WithCause(err)
	case errors.Is(err, context.Canceled):
		return rcp.NewError(rcp.CodeCancelled, "request cancelled").WithCause(err)
	}
	return nil
}

// classified builds the client-facing error for an adapter failure:
// data.retryable from §12.2 and retryAfterMs when the error carries one.
//
// Who is at fault decides between -32602 and -32603 (§12): -32602 only
// when the engine refused a client value the sidecar passed through
// unchanged, named in data.field (adapters.Rejection.ClientField). An
// engine refusing a request the sidecar built is a server-side failure:
// -32603 with the engine's reason, made safe by the adapter, in
// data.detail. No -32602 leaves here without a real field.
func classified(code rcp.Code, err error) *rcp.Error {
	var rej adapters.Rejection
	isRej := errors.As(err, &rej) && rej.Refused()
	field := ""
	if isRej {
		field = rej.ClientField()
	}
	if code == rcp.CodeInvalidParams && field == "" {
		code = rcp.CodeInternalError
	}
	// A refusal is deterministic: the same request is refused again.
	retry := code.Retryable() && !isRej
	data := &rcp.ErrorData{Retryable: &retry}
	var ra adapters.RetryAfterer
	if errors.As(err, &ra) {
		if ms := ra.RetryAfterMs(); ms > 0 {
			data.RetryAfterMs = &ms
		}
	}
	switch code {
	case rcp.CodeInvalidParams:
		data.Field = field
	case rcp.CodeOptionUnsupported:
		// The engine's own text is never sent: the most precise honest
		// name is the backend feature the request needed.
		data.Option = "backend"
	}
	if isRej && (code == rcp.CodeInvalidParams || code == rcp.CodeInternalError) {
		data.Detail = rej.Reason()
	}
	msg := genericMessage(code, field)
	if isRej && code == rcp.CodeInternalError {
		msg = rejectedMessage
	}
	out := &rcp.Error{Code: code, Message: msg, Data: data}
	return out.WithCause(err)
}

func genericMessage(code rcp.Code, field string) string {
	switch code {
	case rcp.CodeBackendUnavailable:
		return "backend unavailable"
	case rcp.CodeRateLimited:
		return "backend is rate limiting; retry later"
	case rcp.CodeUnauthorized:
		return "backend refused the sidecar's credentials"
	case rcp.CodeTimeout:
		return "backend timed out"
	case rcp.CodeInvalidParams:
		return "the backend rejected the value of " + field
	case rcp.CodeNotFound:
		return "backend target not found"
	case rcp.CodeConflict:
		return "backend reported a conflict"
	case rcp.CodePayloadTooLarge:
		return "request too large for the backend"
	case rcp.CodeOptionUnsupported:
		return "the backend does not support a feature this request needs"
	}
	return "backend error"
}

// rejectedMessage is the message of an engine refusing a request the
// sidecar built.
const rejectedMessage = "the backend rejected a request the sidecar built"

func levelFor(code rcp.Code) slog.Level {
	if code == rcp.CodeInternalError {
		return slog.LevelError
	}
	return slog.LevelWarn
}

func slogAttrs(code rcp.Code, err error) []slog.Attr {
	return []slog.Attr{slog.String("code", code.String()), slog.String("error", err.Error())}
}
