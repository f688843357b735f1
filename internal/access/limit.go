package access

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// bucket is a per-key token bucket (§15.5 per-client rate limiting) backed
// by golang.org/x/time/rate. A nil bucket admits everything.
type bucket struct {
	lim *rate.Limiter
}

// newBucket returns a full bucket, or nil when rps is not positive. Burst
// 0 means max(1, ceil(rps)).
func newBucket(rps float64, burst int) *bucket {
	if rps <= 0 {
		return nil
	}
	if burst <= 0 {
		burst = int(max(1, math.Ceil(rps)))
	}
	return &bucket{lim: rate.NewLimiter(rate.Limit(rps), burst)}
}

// take removes one token at now, or reports how long until one is
// available without consuming anything. The wait is the delay of a
// reservation made at now, which is cancelled straight away: a request
// that is shed does not hold a future token.
func (b *bucket) take(now time.Time) (wait time.Duration, ok bool) {
	if b == nil {
		return 0, true
	}
	r := b.lim.ReserveN(now, 1)
	if !r.OK() {
		return 0, false // unreachable: burst >= 1 and one token is asked for
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// limits returns the bucket's rate and burst.
func (b *bucket) limits() (rps float64, burst int) {
	return float64(b.lim.Limit()), b.lim.Burst()
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

// same reports whether b is the bucket newBucket(rps, burst) would make,
// so that a reload keeps a bucket (and its tokens) whose rate is unchanged.
func (b *bucket) same(rps float64, burst int) bool {
	nb := newBucket(rps, burst)
	if b == nil || nb == nil {
		return b == nil && nb == nil
	}
	return b.lim.Limit() == nb.lim.Limit() && b.lim.Burst() == nb.lim.Burst()
}
