package retry

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock advances only when slept on, so the tests do not depend on
// how busy the machine is.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	slept  []time.Duration
	cancel context.CancelFunc // when set, the n-th sleep cancels instead
	cutAt  int
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil && len(c.slept) == c.cutAt {
		c.cancel()
		return false
	}
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return ctx.Err() == nil
}

var (
	errTransient = errors.New("transient")
	errFinal     = errors.New("final")
)

// hinted is an error that carries a retry hint.
type hinted struct{ after time.Duration }

func (h hinted) Error() string { return "hinted" }

func TestDo(t *testing.T) {
	// The fake clock starts in the future so that a real context deadline
	// relative to it has not passed yet.
	t0 := time.Now().Add(time.Hour)
	isTransient := func(err error) bool { return !errors.Is(err, errFinal) }
	hint := func(err error) time.Duration {
		var h hinted
		if errors.As(err, &h) {
			return h.after
		}
		return 0
	}
	tests := []struct {
		name      string
		policy    Policy
		deadline  time.Duration // 0: none
		errs      []error       // results of successive attempts; past the end: success
		wantErr   error
		wantCalls int
		wantSlept []time.Duration
	}{
		{"success first", Policy{MaxAttempts: 3, Base: time.Second, Retryable: isTransient},
			0, nil, nil, 1, nil},
		{"zero policy is one attempt", Policy{},
			0, []error{errTransient}, errTransient, 1, nil},
		{"retries then succeeds, doubling", Policy{MaxAttempts: 4, Base: 100 * time.Millisecond, Max: time.Second, Retryable: isTransient},
			0, []error{errTransient, errTransient}, nil, 3, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{"capped at Max", Policy{MaxAttempts: 5, Base: 100 * time.Millisecond, Max: 250 * time.Millisecond, Retryable: isTransient},
			0, []error{errTransient, errTransient, errTransient, errTransient}, nil, 5,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond, 250 * time.Millisecond}},
		{"attempts run out", Policy{MaxAttempts: 2, Base: time.Millisecond, Retryable: isTransient},
			0, []error{errTransient, errTransient, errTransient}, errTransient, 2, []time.Duration{time.Millisecond}},
		{"not retryable", Policy{MaxAttempts: 5, Base: time.Millisecond, Retryable: isTransient},
			0, []error{errTransient, errFinal, errTransient}, errFinal, 2, []time.Duration{time.Millisecond}},
		{"no predicate: every error final", Policy{MaxAttempts: 5, Base: time.Millisecond},
			0, []error{errTransient}, errTransient, 1, nil},
		{"hint raises the wait", Policy{MaxAttempts: 2, Base: 10 * time.Millisecond, Retryable: isTransient, Hint: hint},
			0, []error{hinted{time.Second}}, nil, 2, []time.Duration{time.Second}},
		{"hint below jitter keeps jitter", Policy{MaxAttempts: 2, Base: 10 * time.Millisecond, Retryable: isTransient, Hint: hint},
			0, []error{hinted{time.Millisecond}}, nil, 2, []time.Duration{10 * time.Millisecond}},
		{"deadline cannot cover the wait", Policy{MaxAttempts: 5, Base: time.Second, Retryable: isTransient},
			1500 * time.Millisecond, []error{errTransient, errTransient}, errTransient, 2, []time.Duration{time.Second}},
		{"budget cannot cover the wait", Policy{MaxAttempts: 5, Base: time.Second, Budget: 2 * time.Second, Retryable: isTransient},
			0, []error{errTransient, errTransient}, errTransient, 2, []time.Duration{time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &fakeClock{now: t0}
			p := tt.policy
			p.clock = clk
			p.jitter = func(n time.Duration) time.Duration { return n } // the ceiling, to make waits exact
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, t0.Add(tt.deadline))
				defer cancel()
			}
			var retried []int
			p.OnRetry = func(attempt int, _ time.Duration, _ error) { retried = append(retried, attempt) }
			calls := 0
			err := Do(ctx, p, func(_ context.Context, attempt int) error {
				if attempt != calls {
					t.Errorf("attempt %d on call %d", attempt, calls)
				}
				calls++
				if attempt < len(tt.errs) {
					return tt.errs[attempt]
				}
				return nil
			})
			if !errors.Is(err, tt.wantErr) && !(tt.wantErr == nil && err == nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if calls != tt.wantCalls {
				t.Fatalf("%d calls, want %d", calls, tt.wantCalls)
			}
			if !slices.Equal(clk.slept, tt.wantSlept) {
				t.Fatalf("slept %v, want %v", clk.slept, tt.wantSlept)
			}
			if len(retried) != len(tt.wantSlept) {
				t.Fatalf("OnRetry saw %v, want %d retries", retried, len(tt.wantSlept))
			}
		})
	}
}

// TestCancelWhileWaiting: a context ended during the wait stops retrying
// and returns the last attempt's error.
func TestCancelWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := &fakeClock{now: time.Unix(1000, 0), cancel: cancel, cutAt: 1}
	p := Policy{MaxAttempts: 10, Base: time.Second, Retryable: func(error) bool { return true }, clock: clk}
	calls := 0
	err := Do(ctx, p, func(context.Context, int) error { calls++; return errTransient })
	if !errors.Is(err, errTransient) || calls != 2 || ctx.Err() == nil {
		t.Fatalf("err %v after %d calls (ctx %v); want the transient error after 2", err, calls, ctx.Err())
	}
}

// TestBackoffJitterBounds: the real jitter stays within [0, ceiling] and
// the shift never overflows, however many attempts.
func TestBackoffJitterBounds(t *testing.T) {
	p := Policy{Base: 200 * time.Millisecond, Max: 5 * time.Second}
	for attempt := range 80 {
		ceiling := min(p.Max, p.Base<<min(attempt, 5))
		for range 50 {
			if w := p.Backoff(attempt, nil); w < 0 || w > ceiling {
				t.Fatalf("attempt %d: wait %v outside [0, %v]", attempt, w, ceiling)
			}
		}
	}
	uncapped := Policy{Base: time.Hour}
	if w := uncapped.Backoff(200, nil); w < 0 {
		t.Fatalf("uncapped backoff overflowed: %v", w)
	}
}

// TestRealClock runs Do with real (short) delays, as the callers do.
func TestRealClock(t *testing.T) {
	p := Policy{MaxAttempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond, Retryable: func(error) bool { return true }}
	calls := 0
	err := Do(context.Background(), p, func(context.Context, int) error {
		calls++
		if calls < 3 {
			return errTransient
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if (realClock{}).Sleep(ctx, time.Hour) {
		t.Fatal("Sleep on a done context returned true")
	}
}
