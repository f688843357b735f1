package retry

import (
	"sync"
	"time"
)

// Breaker states as reported by Breaker.State.
const (
	StateClosed   = "closed"
	StateOpen     = "open"
	StateHalfOpen = "half-open"
)

// halfOpenRetryAfter is the wait told to calls refused while the single
// half-open trial is in flight.
const halfOpenRetryAfter = 250 * time.Millisecond

// Outcome is how one call counts for a Breaker.
type Outcome int

const (
	// Neutral calls say nothing about the dependency (the caller gave up).
	Neutral Outcome = iota
	// Healthy calls got an answer from the dependency, errors included.
	Healthy
	// Failed calls ended in a failure of the dependency.
	Failed
)

// Breaker is a consecutive-failure circuit breaker: closed until
// threshold failures in a row, then open for openFor, then half-open,
// admitting one trial whose outcome closes or re-opens it. It is the one
// breaker of the module: the resilient engine decorator and the shared
// state store both use it.
//
// A trial is one call, or every call of one group (any comparable value
// the caller uses to tie calls together, such as the stages of a hybrid
// retrieve that succeed or fail as a unit): refusing a sibling of the
// trial would cancel the trial itself, leave it without a verdict, and
// keep the breaker half-open for as long as only such requests arrive.
type Breaker struct {
	threshold int
	openFor   time.Duration

	mu        sync.Mutex
	state     string
	fails     int
	openUntil time.Time
	seq       uint64 // last trial id handed out
	trial     uint64 // the half-open trial in flight; 0: none
	group     any    // the trial's call group; nil: a lone call
	members   int    // calls of the trial still in flight
}

// NewBreaker returns a closed breaker that opens after threshold
// consecutive failures (at least 1) for openFor.
func NewBreaker(threshold int, openFor time.Duration) *Breaker {
	return &Breaker{threshold: max(1, threshold), openFor: openFor, state: StateClosed}
}

// Allow admits a call of group g (nil: a lone call) or reports how long to
// wait. A non-zero trial marks a call of the half-open trial; it is passed
// back to Record with the call's outcome.
func (b *Breaker) Allow(g any) (trial uint64, wait time.Duration, ok bool) {
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

// Record applies one call's outcome. The first verdict of a trial's calls
// decides it; a trial whose calls all ended without a verdict (the caller
// gave up) leaves the breaker half-open for the next call to try.
func (b *Breaker) Record(trial uint64, o Outcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	current := trial != 0 && trial == b.trial
	if current {
		b.members--
		if o != Neutral || b.members == 0 {
			b.trial, b.group, b.members = 0, nil, 0
		}
	}
	switch {
	case o == Healthy:
		b.state, b.fails = StateClosed, 0
	case o == Failed && (current || b.state == StateClosed):
		b.fails++
		if current || b.fails >= b.threshold {
			b.state, b.openUntil = StateOpen, time.Now().Add(b.openFor)
		}
	}
}

// Refusing reports, without admitting anything, that a call would be
// refused now (the breaker is open) and how long is left: a caller can
// then skip work it would do before the call.
func (b *Breaker) Refusing() (wait time.Duration, refusing bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != StateOpen {
		return 0, false
	}
	left := time.Until(b.openUntil)
	return left, left > 0
}

// State returns the state, reporting an expired open state as half-open.
func (b *Breaker) State() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == StateOpen && !time.Now().Before(b.openUntil) {
		return StateHalfOpen
	}
	return b.state
}
