package retry

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestBreaker: threshold failures in a row open the breaker; it refuses
// until openFor has passed, then admits one trial (and that trial's group
// siblings), whose verdict closes or re-opens it; a success resets the
// count; a lone call never joins another lone call's trial.
func TestBreaker(t *testing.T) {
	b := NewBreaker(2, 30*time.Millisecond)
	fail := func() {
		tr, _, ok := b.Allow(nil)
		if !ok {
			t.Fatal("refused while closed")
		}
		b.Record(tr, Failed)
	}
	fail()
	tr, _, _ := b.Allow(nil)
	b.Record(tr, Healthy) // a success in between resets the count
	fail()
	if b.State() != StateClosed {
		t.Fatalf("state %s after failure, success, failure; want closed", b.State())
	}
	fail()
	if b.State() != StateOpen {
		t.Fatalf("state %s after 2 failures in a row, want open", b.State())
	}
	if _, wait, ok := b.Allow(nil); ok || wait <= 0 || wait > 30*time.Millisecond {
		t.Fatalf("open breaker admitted (ok %v) or waits %v", ok, wait)
	}
	time.Sleep(40 * time.Millisecond)
	if b.State() != StateHalfOpen {
		t.Fatalf("state %s after openFor, want half-open", b.State())
	}
	group := new(int)
	trial, _, ok := b.Allow(group)
	if !ok || trial == 0 {
		t.Fatal("half-open breaker refused the trial")
	}
	if sib, _, ok := b.Allow(group); !ok || sib != trial {
		t.Fatal("a sibling of the trial's group was refused")
	}
	if _, _, ok := b.Allow(nil); ok {
		t.Fatal("a lone call joined the group's trial")
	}
	b.Record(trial, Failed)
	if b.State() != StateOpen {
		t.Fatalf("state %s after a failed trial, want open", b.State())
	}
	time.Sleep(40 * time.Millisecond)
	trial, _, _ = b.Allow(nil)
	if _, _, ok := b.Allow(nil); ok {
		t.Fatal("a second lone call joined a lone trial")
	}
	b.Record(trial, Healthy)
	if b.State() != StateClosed {
		t.Fatalf("state %s after a healthy trial, want closed", b.State())
	}
}

// TestBreakerRefusing: Refusing says what Allow would refuse for being
// open, with the time left, and admits nothing itself: not while closed,
// not once the open period is over (a half-open trial is for Allow).
func TestBreakerRefusing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBreaker(1, 5*time.Second)
		if w, r := b.Refusing(); r || w != 0 {
			t.Fatalf("closed: Refusing = %v, %v", w, r)
		}
		tr, _, _ := b.Allow(nil)
		b.Record(tr, Failed)
		time.Sleep(2 * time.Second)
		if w, r := b.Refusing(); !r || w != 3*time.Second {
			t.Fatalf("open, 3s left: Refusing = %v, %v", w, r)
		}
		if _, _, ok := b.Allow(nil); ok {
			t.Fatal("Allow admitted a call that Refusing refused")
		}
		time.Sleep(3 * time.Second)
		if w, r := b.Refusing(); r {
			t.Fatalf("open period over: Refusing = %v, %v", w, r)
		}
		if _, _, ok := b.Allow(nil); !ok {
			t.Fatal("Refusing took the half-open trial")
		}
	})
}
