package access

import (
	"testing"
	"time"
)

// TestSamplerBurstThenCount: a kind writes its first sampleBurst lines per
// window; the rest are counted and reported with the next line written,
// and kinds are sampled apart.
func TestSamplerBurstThenCount(t *testing.T) {
	now := time.Unix(0, 0)
	s := newSampler(func() time.Time { return now })
	written := 0
	for range 1000 {
		if ok, _ := s.allow("credentials"); ok {
			written++
		}
	}
	if written != sampleBurst {
		t.Fatalf("%d of 1000 lines written in one window, want %d", written, sampleBurst)
	}
	if ok, _ := s.allow("scope"); !ok {
		t.Fatal("another kind is suppressed with the first")
	}
	now = now.Add(sampleWindow)
	ok, suppressed := s.allow("credentials")
	if !ok || suppressed != 1000-sampleBurst {
		t.Fatalf("next window: written %t, suppressed %d, want true and %d", ok, suppressed, 1000-sampleBurst)
	}
	if ok, suppressed := s.allow("credentials"); !ok || suppressed != 0 {
		t.Fatalf("count not reset: %t %d", ok, suppressed)
	}
}
