package access

import (
	"math"
	"sync"
	"time"
)

// bucket is a token bucket (§15.5 per-client rate limiting). A nil bucket
// admits everything.
type bucket struct {
	mu          sync.Mutex
	rate, burst float64
	tokens      float64
	last        time.Time
}

// newBucket returns a full bucket, or nil when rps is not positive. Burst
// 0 means max(1, ceil(rps)).
func newBucket(rps float64, burst int) *bucket {
	if rps <= 0 {
		return nil
	}
	b := float64(burst)
	if burst <= 0 {
		b = max(1, math.Ceil(rps))
	}
	return &bucket{rate: rps, burst: b, tokens: b}
}

// take removes one token at now, or reports how many seconds until one is
// available.
func (b *bucket) take(now time.Time) (wait float64, ok bool) {
	if b == nil {
		return 0, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return (1 - b.tokens) / b.rate, false
}

// tryAcquire takes a slot of the global concurrency limit without
// waiting; the returned release must be called once. A nil semaphore
// always admits.
func tryAcquire(sem chan struct{}) (release func(), ok bool) {
	if sem == nil {
		return func() {}, true
	}
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, true
	default:
		return nil, false
	}
}
