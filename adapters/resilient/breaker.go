package resilient

import (
	"sync"
	"time"
)

// Breaker states as reported by State.
const (
	StateClosed   = "closed"
	StateOpen     = "open"
	StateHalfOpen = "half-open"
)

// halfOpenRetryAfter is the hint given to calls refused while the single
// half-open trial is in flight.
const halfOpenRetryAfter = 250 * time.Millisecond

// outcome is how one engine call counts for the breaker.
type outcome int

const (
	// neutral calls say nothing about the engine (the caller gave up).
	neutral outcome = iota
	// healthy calls got an answer from the engine, errors included.
	healthy
	// failed calls ended in a retryable engine failure.
	failed
)

// breaker is a consecutive-failure circuit breaker: closed until
// threshold retryable failures in a row, then open for openFor, then
// half-open, admitting one trial call whose outcome closes or re-opens it.
type breaker struct {
	threshold int
	openFor   time.Duration

	mu        sync.Mutex
	state     string
	fails     int
	openUntil time.Time
	trial     bool // a half-open trial call is in flight
}

func newBreaker(threshold int, openFor time.Duration) *breaker {
	return &breaker{threshold: threshold, openFor: openFor, state: StateClosed}
}

// allow admits a call or reports how long to wait. trial marks the one
// call admitted in half-open state; its outcome decides the next state.
func (b *breaker) allow() (trial bool, wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case StateOpen:
		if left := time.Until(b.openUntil); left > 0 {
			return false, left, false
		}
		b.state = StateHalfOpen
		fallthrough
	case StateHalfOpen:
		if b.trial {
			return false, min(halfOpenRetryAfter, b.openFor), false
		}
		b.trial = true
		return true, 0, true
	}
	return false, 0, true
}

// record applies one call's outcome.
func (b *breaker) record(trial bool, o outcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if trial {
		b.trial = false
	}
	switch {
	case o == healthy:
		b.state, b.fails = StateClosed, 0
	case o == failed && (trial || b.state == StateClosed):
		b.fails++
		if trial || b.fails >= b.threshold {
			b.state, b.openUntil = StateOpen, time.Now().Add(b.openFor)
		}
	}
}

// current returns the state, turning an expired open state into half-open.
func (b *breaker) current() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == StateOpen && !time.Now().Before(b.openUntil) {
		return StateHalfOpen
	}
	return b.state
}
