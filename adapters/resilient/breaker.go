package resilient

import (
	"sync"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
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
// half-open, admitting one trial whose outcome closes or re-opens it.
//
// A trial is one call, or every call of one adapters.CallGroup: the
// stages of a hybrid retrieve run together and the Engine cancels the
// others when one fails, so refusing a sibling of the trial would cancel
// the trial itself, leave it without a verdict, and keep the breaker
// half-open for as long as only such requests arrive.
type breaker struct {
	threshold int
	openFor   time.Duration

	mu        sync.Mutex
	state     string
	fails     int
	openUntil time.Time
	seq       uint64              // last trial id handed out
	trial     uint64              // the half-open trial in flight; 0: none
	group     *adapters.CallGroup // the trial's call group; nil: a lone call
	members   int                 // calls of the trial still in flight
}

func newBreaker(threshold int, openFor time.Duration) *breaker {
	return &breaker{threshold: threshold, openFor: openFor, state: StateClosed}
}

// allow admits a call of group g (nil: a lone call) or reports how long to
// wait. A non-zero trial marks a call of the half-open trial; it is passed
// back to record with the call's outcome.
func (b *breaker) allow(g *adapters.CallGroup) (trial uint64, wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case StateOpen:
		if left := time.Until(b.openUntil); left > 0 {
			return 0, left, false
		}
		b.state = StateHalfOpen
		fallthrough
	case StateHalfOpen:
		switch {
		case b.trial == 0:
			b.seq++
			b.trial, b.group, b.members = b.seq, g, 1
			return b.trial, 0, true
		case g != nil && g == b.group:
			b.members++ // a sibling of the trial joins it
			return b.trial, 0, true
		}
		return 0, min(halfOpenRetryAfter, b.openFor), false
	}
	return 0, 0, true
}

// record applies one call's outcome. The first verdict of a trial's calls
// decides it; a trial whose calls all ended without a verdict (the caller
// gave up) leaves the breaker half-open for the next call to try.
func (b *breaker) record(trial uint64, o outcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	current := trial != 0 && trial == b.trial
	if current {
		b.members--
		if o != neutral || b.members == 0 {
			b.trial, b.group, b.members = 0, nil, 0
		}
	}
	switch {
	case o == healthy:
		b.state, b.fails = StateClosed, 0
	case o == failed && (current || b.state == StateClosed):
		b.fails++
		if current || b.fails >= b.threshold {
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
