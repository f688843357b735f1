package access_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// fakeLimiter is a fake shared limiter (named as one): it records the keys
// it is asked about and answers what the test sets.
type fakeLimiter struct {
	mu   sync.Mutex
	keys []string
	ok   bool
	wait time.Duration
	err  error
}

func (f *fakeLimiter) Allow(_ context.Context, key string, _ float64, _ int) (time.Duration, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, key)
	return f.wait, f.ok, f.err
}

const limitNote = "rate limit: the shared state store did not answer"

func hasNote(res *rcp.RetrieveResult, prefix string) bool {
	if res.Usage == nil {
		return false
	}
	for _, n := range res.Usage.Notes {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

// TestSharedLimiter: with a shared limiter, its verdict is the key's rate
// limit (a refusal sheds even when this replica's bucket is full), it is
// asked under a hash of the key id, never the id or the secret, and a
// key without a rate never reaches it.
func TestSharedLimiter(t *testing.T) {
	keys := testKeys()
	keys[1].RPS, keys[1].Burst = 1000, 1000 // this replica's bucket would admit
	lim := &fakeLimiter{ok: false, wait: 1500 * time.Millisecond}
	ts := newServer(t, access.Options{Keys: keys, Limiter: lim})
	r := call(t, ts, acmeKey, "retrieve", map[string]any{"query": "rocket", "k": 2})
	r.wantError(t, http.StatusTooManyRequests, rcp.CodeRateLimited)
	if got := r.header.Get("Retry-After"); got != "2" {
		t.Fatalf("Retry-After %q, want the shared limiter's 1.5s rounded up to 2", got)
	}
	lim.mu.Lock()
	asked := append([]string(nil), lim.keys...)
	lim.mu.Unlock()
	if len(asked) != 1 || len(asked[0]) != 64 || strings.Contains(asked[0], "acme") || strings.Contains(asked[0], acmeKey) {
		t.Fatalf("limiter asked %q: want one opaque 64-hex key", asked)
	}
	// The reader key has no rate: the limiter is not asked.
	retrieve(t, ts, readerKey, map[string]any{"query": "rocket", "k": 2})
	if lim.mu.Lock(); len(lim.keys) != 1 {
		t.Fatalf("limiter asked %d times, want once (the reader key has no rate)", len(lim.keys))
	}
	lim.mu.Unlock()

	lim.mu.Lock()
	lim.ok = true
	lim.mu.Unlock()
	if res := retrieve(t, ts, acmeKey, map[string]any{"query": "rocket", "k": 2}); hasNote(res, limitNote) {
		t.Fatalf("admitted by the shared limiter, yet notes %v", res.Usage.Notes)
	}
}

// TestSharedLimiterDown: when the shared limiter does not answer, the
// key's bucket in this replica limits instead — the burst is admitted,
// the rest shed — and every admitted retrieve says so in usage.notes.
func TestSharedLimiterDown(t *testing.T) {
	keys := testKeys()
	keys[1].RPS, keys[1].Burst = 0.001, 3
	lim := &fakeLimiter{err: errors.New("fake: store down")}
	ts := newServer(t, access.Options{Keys: keys, Limiter: lim})
	for i := range 3 {
		res := retrieve(t, ts, acmeKey, map[string]any{"query": "rocket", "k": 2})
		if !hasNote(res, limitNote) {
			t.Fatalf("request %d admitted by the fallback bucket, notes %v", i, res.Usage.Notes)
		}
	}
	call(t, ts, acmeKey, "retrieve", map[string]any{"query": "rocket", "k": 2}).wantError(t, http.StatusTooManyRequests, rcp.CodeRateLimited)
}
