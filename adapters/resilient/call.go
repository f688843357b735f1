package resilient

import (
	"context"
	"errors"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	retrypkg "github.com/rcp-sidecar/rcp-sidecar/retry"
)

// Error is a failure produced by the decorator itself: the breaker is
// open, an attempt exceeded the per-call timeout, or the process is
// shutting down. It deliberately does not unwrap to the context error that
// ended the attempt, so the Engine does not mistake an engine-side timeout
// for the request's own deadline or a cancel (§13.1).
type Error struct {
	// Code is -32010 (open breaker, shutdown) or -32014 (per-call timeout).
	Code rcp.Code
	// RetryAfter is the hint sent as data.retryAfterMs (zero: none).
	RetryAfter time.Duration
	msg        string
}

func (e *Error) Error() string { return "resilient: " + e.msg }

// RetryAfterMs implements adapters.RetryAfterer, rounding up to whole ms.
func (e *Error) RetryAfterMs() int64 {
	return int64((e.RetryAfter + time.Millisecond - 1) / time.Millisecond)
}

// errShutdown is the cause Abort gives the calls it ends.
var errShutdown = errors.New("resilient: shutting down")

// errCallTimeout is the cause of a per-call deadline.
var errCallTimeout = errors.New("resilient: engine call timed out")

// do runs f under the breaker, each attempt with its own deadline, and
// retries when retry is set and the failure is retryable (§12.2), backing
// off as retry does for every retried call of the module.
func (r *Adapter) do(ctx context.Context, op string, timeout time.Duration, retry bool, f func(context.Context) error) error {
	p := retrypkg.Policy{MaxAttempts: 1}
	if retry {
		p = retrypkg.Policy{
			MaxAttempts: r.opts.Retries + 1,
			Base:        r.opts.BackoffBase,
			Max:         r.opts.BackoffMax,
			Retryable:   func(err error) bool { return r.retryable(ctx, err) },
			Hint:        retryHint,
			OnRetry: func(attempt int, wait time.Duration, err error) {
				r.log.LogAttrs(ctx, slogDebug, "retrying engine call", attrs(r.opts.Name, op, attempt+1, wait, r.ErrorCode(err))...)
			},
		}
	}
	return retrypkg.Do(ctx, p, func(ctx context.Context, _ int) error { return r.once(ctx, timeout, f) })
}

// once is one attempt: admitted by the breaker (with the other calls of
// its request's adapters.CallGroup), bounded by timeout and by Abort, its
// outcome recorded.
func (r *Adapter) once(ctx context.Context, timeout time.Duration, f func(context.Context) error) error {
	trial, wait, ok := r.br.Allow(callGroup(adapters.CallGroupOf(ctx)))
	if !ok {
		return &Error{Code: rcp.CodeBackendUnavailable, RetryAfter: wait, msg: "circuit open"}
	}
	if r.stopCtx.Err() != nil {
		r.br.Record(trial, retrypkg.Neutral)
		return &Error{Code: rcp.CodeBackendUnavailable, msg: "shutting down"}
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	unhook := context.AfterFunc(r.stopCtx, func() { cancel(errShutdown) })
	defer unhook()
	tctx, tcancel := context.WithTimeoutCause(cctx, timeout, errCallTimeout)
	err := f(tctx)
	err = r.translate(ctx, tctx, timeout, err)
	tcancel()
	r.recordOutcome(ctx, trial, err)
	return err
}

// translate replaces the error of an attempt ended by the decorator's own
// context (per-call timeout, Abort) while the request's is still live. A
// timeout says where and how long was waited; the inner error adds
// nothing to that (it is the same deadline, seen from the client).
func (r *Adapter) translate(ctx, tctx context.Context, timeout time.Duration, err error) error {
	if err == nil || ctx.Err() != nil || tctx.Err() == nil {
		return err
	}
	if errors.Is(context.Cause(tctx), errShutdown) {
		return &Error{Code: rcp.CodeBackendUnavailable, msg: "shutting down: " + err.Error()}
	}
	return &Error{Code: rcp.CodeTimeout, msg: "no answer from " + r.target() + " within " + timeout.String()}
}

// target names the engine for a message: "elasticsearch at URL", or as
// much of that as the options give.
func (r *Adapter) target() string {
	e, u := r.opts.Engine, r.opts.Endpoint
	switch {
	case e == "" && u == "":
		return "the engine"
	case u == "":
		return e
	case e == "":
		return u
	}
	return e + " at " + u
}

func (r *Adapter) recordOutcome(ctx context.Context, trial uint64, err error) {
	before := r.br.State()
	r.br.Record(trial, r.outcome(ctx, err))
	if after := r.br.State(); after != before {
		r.log.Warn("circuit breaker "+after, "backend", r.opts.Name, "from", before)
	}
}

// outcome classifies an attempt for the breaker: the caller giving up
// says nothing about the engine, nor does a shutdown. Only failures of the
// request as a whole count (refused or reset connections, timeouts, 5xx
// answers, rate limiting); an answer with failed shards or a lost search
// context (adapters.PartialFailure) is an answer from the engine.
func (r *Adapter) outcome(ctx context.Context, err error) retrypkg.Outcome {
	var e *Error
	var pf adapters.PartialFailure
	switch {
	case err == nil:
		return retrypkg.Healthy
	case ctx.Err() != nil, errors.As(err, &e) && e.Code == rcp.CodeBackendUnavailable:
		return retrypkg.Neutral
	case errors.As(err, &pf) && pf.PartialFailure():
		return retrypkg.Healthy
	case retryableCode(r.ErrorCode(err)):
		return retrypkg.Failed
	}
	return retrypkg.Healthy
}

// retryable reports whether another attempt may succeed: the request is
// still live, the breaker did not refuse it, the process is not stopping,
// and the engine failure is one §12.2 calls transient.
func (r *Adapter) retryable(ctx context.Context, err error) bool {
	var e *Error
	if ctx.Err() != nil || r.stopCtx.Err() != nil {
		return false
	}
	if errors.As(err, &e) && e.Code == rcp.CodeBackendUnavailable {
		return false // open circuit or shutdown: answer now, with the hint
	}
	return retryableCode(r.ErrorCode(err))
}

func retryableCode(c rcp.Code) bool {
	return c == rcp.CodeBackendUnavailable || c == rcp.CodeRateLimited || c == rcp.CodeTimeout
}

// retryHint is the engine's retry hint carried by err (zero: none).
func retryHint(err error) time.Duration {
	var ra adapters.RetryAfterer
	if errors.As(err, &ra) {
		return time.Duration(ra.RetryAfterMs()) * time.Millisecond
	}
	return 0
}

// sleep waits d or until ctx is done; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
