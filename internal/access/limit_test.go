package access

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name        string
		rps         float64
		burst       int
		at          []time.Duration // offsets of successive takes
		want        []bool
		lastWaitSec float64
	}{
		{"unlimited", 0, 0, []time.Duration{0, 0, 0}, []bool{true, true, true}, 0},
		{"burst then refill", 2, 2, []time.Duration{0, 0, 0, 500 * time.Millisecond}, []bool{true, true, false, true}, 0},
		{"default burst is ceil(rps)", 1.5, 0, []time.Duration{0, 0, 0}, []bool{true, true, false}, 1 / 1.5},
		{"wait hint", 4, 1, []time.Duration{0, 0}, []bool{true, false}, 0.25},
		{"banked tokens cap at burst", 10, 1, []time.Duration{0, time.Hour, time.Hour}, []bool{true, true, false}, 0.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBucket(tt.rps, tt.burst)
			var wait time.Duration
			for i, d := range tt.at {
				var ok bool
				wait, ok = b.take(t0.Add(d))
				if ok != tt.want[i] {
					t.Fatalf("take %d at %v: ok=%v, want %v", i, d, ok, tt.want[i])
				}
			}
			if diff := wait.Seconds() - tt.lastWaitSec; diff > 1e-9 || diff < -1e-9 {
				t.Fatalf("last wait %v, want %.4fs", wait, tt.lastWaitSec)
			}
		})
	}
}

// TestBucketRetryHint checks that the wait a shed request is told (the
// retryAfterMs hint and the HTTP Retry-After seconds) is the limiter's
// reservation delay, rounded up, and that being shed does not use up a
// token: a retry at the hinted time is admitted.
func TestBucketRetryHint(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name       string
		rps        float64
		burst      int
		wantMs     int64
		wantHeader string
	}{
		{"quarter second", 4, 1, 250, "1"},
		{"sub-millisecond rounds up", 3000, 1, 1, "1"},
		{"fractional rate", 1.5, 1, 667, "1"},
		{"slow rate", 0.2, 1, 5000, "5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBucket(tt.rps, tt.burst)
			if _, ok := b.take(t0); !ok {
				t.Fatal("first take refused")
			}
			wait, ok := b.take(t0)
			if ok {
				t.Fatal("second take admitted on an empty bucket")
			}
			ms := retryAfterMs(wait)
			if ms != tt.wantMs {
				t.Fatalf("retryAfterMs(%v) = %d, want %d", wait, ms, tt.wantMs)
			}
			rec := httptest.NewRecorder()
			shed(rec, ms, "rate limit exceeded")
			if got := rec.Header().Get("Retry-After"); got != tt.wantHeader {
				t.Fatalf("Retry-After %q, want %q", got, tt.wantHeader)
			}
			if rec.Code != http.StatusTooManyRequests {
				t.Fatalf("HTTP %d, want 429", rec.Code)
			}
			// Repeated refusals must not push the hint further out.
			if again, _ := b.take(t0); again != wait {
				t.Fatalf("second refusal waits %v, first %v", again, wait)
			}
			if _, ok := b.take(t0.Add(wait)); !ok {
				t.Fatalf("take at the hinted time %v refused", wait)
			}
		})
	}
}
