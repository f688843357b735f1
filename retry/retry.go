// Package retry runs a call again after transient failures, with capped
// exponential backoff and full jitter (RCP/1 §12.2). It is the one retry
// loop of the module: the resilient engine decorator and the embedding
// client both use it, so every retried call backs off the same way.
//
// Attempt n (0-based) that fails with a retryable error is followed by a
// wait drawn uniformly from [0, min(Max, Base·2ⁿ)], raised to the
// server's retry hint when there is one. Retrying stops when the call
// succeeds, the error is not retryable, the attempts run out, the wait
// would outlast the context's deadline or the time budget, or the context
// ends while waiting. The package depends only on the standard library.
package retry

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
)

// Policy says how often and how patiently to retry. The zero Policy makes
// one attempt.
type Policy struct {
	// MaxAttempts bounds the attempts, the first included; values below 1
	// mean 1.
	MaxAttempts int
	// Base and Max shape the backoff: the wait after attempt n is uniform
	// in [0, min(Max, Base·2ⁿ)]. Base 0 retries at once (or after the
	// hint); Max 0 leaves the exponential uncapped.
	Base, Max time.Duration
	// Budget, when positive, bounds the time from the first attempt to
	// the start of the last: a retry whose wait would end past it is not
	// made.
	Budget time.Duration
	// Retryable reports whether another attempt may succeed after err; nil
	// treats every error as final.
	Retryable func(err error) bool
	// Hint returns the server's retry hint carried by err (zero: none);
	// the wait is at least the hint. Nil means no hints.
	Hint func(err error) time.Duration
	// OnRetry, when set, is told about each retry before its wait.
	OnRetry func(attempt int, wait time.Duration, err error)

	// clock and jitter replace time and math/rand in tests.
	clock  clock
	jitter func(n time.Duration) time.Duration
}

// clock is the time source: Now, and a wait that ends early with false
// when ctx is done.
type clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) bool
}

// Do calls f until it succeeds or the policy says stop, and returns f's
// last error (nil on success). attempt counts from 0. When ctx ends while
// waiting, Do returns the last error at once; callers that want the
// context's error check ctx.Err().
func Do(ctx context.Context, p Policy, f func(ctx context.Context, attempt int) error) error {
	clk := p.clock
	if clk == nil {
		clk = realClock{}
	}
	start := clk.Now()
	for attempt := 0; ; attempt++ {
		err := f(ctx, attempt)
		if err == nil || attempt+1 >= p.MaxAttempts || p.Retryable == nil || !p.Retryable(err) {
			return err
		}
		wait := p.Backoff(attempt, err)
		now := clk.Now()
		if dl, ok := ctx.Deadline(); ok && dl.Sub(now) <= wait {
			return err // the wait cannot end before the caller gives up
		}
		if p.Budget > 0 && now.Add(wait).Sub(start) > p.Budget {
			return err
		}
		if p.OnRetry != nil {
			p.OnRetry(attempt, wait, err)
		}
		if !clk.Sleep(ctx, wait) {
			return err
		}
	}
}

// Backoff returns the wait after failed attempt n (0-based): full jitter
// over min(Max, Base·2ⁿ), raised to err's hint.
func (p Policy) Backoff(attempt int, err error) time.Duration {
	ceiling := p.Base
	for i := 0; i < attempt && ceiling > 0 && (p.Max <= 0 || ceiling < p.Max); i++ {
		if ceiling > math.MaxInt64/2 {
			ceiling = math.MaxInt64
			break
		}
		ceiling *= 2
	}
	if p.Max > 0 && ceiling > p.Max {
		ceiling = p.Max
	}
	var wait time.Duration
	if ceiling > 0 {
		jitter := p.jitter
		if jitter == nil {
			jitter = fullJitter
		}
		wait = jitter(ceiling)
	}
	if p.Hint != nil {
		wait = max(wait, p.Hint(err))
	}
	return wait
}

// fullJitter is uniform in [0, n].
func fullJitter(n time.Duration) time.Duration {
	if n == math.MaxInt64 {
		return rand.N(n)
	}
	return rand.N(n + 1)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) bool {
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
