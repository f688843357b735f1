package health_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/health"
)

// fakeChecker is a fake engine health endpoint: it answers the status it
// is set to, counts its calls, and can be made to block until released
// (an engine that does not answer).
type fakeChecker struct {
	mu    sync.Mutex
	h     adapters.Health
	err   error
	calls atomic.Int32
	block chan struct{} // nil: answer at once
}

func (f *fakeChecker) Health(ctx context.Context) (adapters.Health, error) {
	f.calls.Add(1)
	f.mu.Lock()
	block := f.block
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return adapters.Health{}, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.h, f.err
}

func (f *fakeChecker) set(h adapters.Health, err error) {
	f.mu.Lock()
	f.h, f.err = h, err
	f.mu.Unlock()
}

var (
	green  = adapters.Health{Status: adapters.HealthGreen, State: "green", Of: "index"}
	yellow = adapters.Health{Status: adapters.HealthYellow, State: "yellow", Of: "index"}
	grey   = adapters.Health{Status: adapters.HealthYellow, State: "grey", Of: "collection"}
	red    = adapters.Health{Status: adapters.HealthRed, State: "red", Of: "index"}
)

// clock is a manual clock for the TTL.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestReadyByStatus: red is not ready and names the backend and state;
// yellow (and Qdrant's grey) is ready with a note; green and a failed
// check are ready without one. Answers carry notes for yellow and red
// only.
func TestReadyByStatus(t *testing.T) {
	for _, tc := range []struct {
		name      string
		h         adapters.Health
		err       error
		wantErr   string
		wantNote  string
		wantNotes int // in answers
	}{
		{"green", green, nil, "", "", 0},
		{"yellow", yellow, nil, "", "backend b1: index health yellow", 1},
		{"grey", grey, nil, "", "backend b1: collection health grey", 1},
		{"red", red, nil, "backend b1: index health red", "", 1},
		{"check failed", adapters.Health{}, errors.New("connection refused"), "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeChecker{}
			f.set(tc.h, tc.err)
			w := health.New("b1", f, health.Options{})
			notes, err := health.Ready(context.Background(), w)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Ready: %v, want ready", err)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Fatalf("Ready: %v, want %q", err, tc.wantErr)
			}
			if got := strings.Join(notes, "|"); got != tc.wantNote {
				t.Errorf("readiness notes %q, want %q", got, tc.wantNote)
			}
			if got := w.Notes(); len(got) != tc.wantNotes {
				t.Errorf("answer notes %q, want %d", got, tc.wantNotes)
			} else if len(got) == 1 && !strings.Contains(got[0], "backend b1: "+tc.h.Of+" health "+tc.h.State) {
				t.Errorf("answer note %q does not name the backend and state", got[0])
			}
		})
	}
}

// TestReadyFederation: each watcher counts; one red member is not ready
// and is named, yellow ones are noted, nil watchers are skipped.
func TestReadyFederation(t *testing.T) {
	a, b, c := &fakeChecker{}, &fakeChecker{}, &fakeChecker{}
	a.set(green, nil)
	b.set(yellow, nil)
	c.set(red, nil)
	ws := []*health.Watcher{health.New("a", a, health.Options{}), nil, health.New("b", b, health.Options{}), health.New("c", c, health.Options{})}
	notes, err := health.Ready(context.Background(), ws...)
	if err == nil || err.Error() != "backend c: index health red" {
		t.Errorf("Ready: %v, want backend c red", err)
	}
	if len(notes) != 1 || notes[0] != "backend b: index health yellow" {
		t.Errorf("notes %q, want backend b yellow", notes)
	}
	c.set(green, nil)
	ws[3] = health.New("c", c, health.Options{})
	if _, err := health.Ready(context.Background(), ws...); err != nil {
		t.Errorf("all green or yellow: %v, want ready", err)
	}
}

// TestCachedWithinTTL: reports are reused within the TTL (no call per
// request), refreshed after it, and a change is seen after the TTL.
func TestCachedWithinTTL(t *testing.T) {
	f := &fakeChecker{}
	f.set(yellow, nil)
	clk := &clock{t: time.Unix(0, 0)}
	w := health.New("b1", f, health.Options{TTL: 5 * time.Second, Now: clk.now})
	if got := w.Current(context.Background()); got != yellow {
		t.Fatalf("first report %+v, want yellow", got)
	}
	for range 1000 {
		w.Notes()
		w.Current(context.Background())
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("%d checks within the TTL, want 1", n)
	}
	f.set(red, nil)
	clk.advance(5 * time.Second)
	if got := w.Current(context.Background()); got != red {
		t.Errorf("after the TTL: %+v, want red", got)
	}
	if n := f.calls.Load(); n != 2 {
		t.Errorf("%d checks, want 2", n)
	}
}

// TestOneCheckInFlight: while the engine does not answer, concurrent
// readers start no second check, answers never wait (Notes returns the
// last report at once), and readiness waits only until its context ends.
func TestOneCheckInFlight(t *testing.T) {
	f := &fakeChecker{}
	f.set(red, nil)
	w := health.New("b1", f, health.Options{TTL: time.Millisecond, Timeout: time.Minute})
	if r := w.Current(context.Background()); r != red {
		t.Fatalf("first report %+v, want red", r)
	}
	release := make(chan struct{})
	f.mu.Lock()
	f.block = release
	f.mu.Unlock()
	time.Sleep(5 * time.Millisecond) // stale now
	var wg sync.WaitGroup
	start := time.Now()
	for range 50 {
		wg.Go(func() {
			if n := w.Notes(); len(n) != 1 {
				t.Errorf("notes %q while a check hangs, want the last (red) one", n)
			}
		})
	}
	wg.Wait()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("answers waited %v on a hanging check", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := health.Ready(ctx, w)
	cancel()
	if err == nil {
		t.Error("readiness during a hanging check: ready, want the last report (red)")
	}
	if n := f.calls.Load(); n != 2 {
		t.Errorf("%d checks started, want 2 (the first, then one for all the stale readers)", n)
	}
	f.set(green, nil)
	close(release)
	if r := w.Current(context.Background()); r.Status != adapters.HealthGreen {
		// the hanging check answered green once released; a fresh one may run
		t.Errorf("after release: %+v, want green", r)
	}
}

// TestCheckTimeout: a check that never answers ends at the Timeout and
// reads as unknown (ready, no note): an unreachable engine is the
// breaker's business, not the health's.
func TestCheckTimeout(t *testing.T) {
	f := &fakeChecker{block: make(chan struct{})}
	f.set(red, nil)
	w := health.New("b1", f, health.Options{Timeout: 50 * time.Millisecond})
	start := time.Now()
	notes, err := health.Ready(context.Background(), w)
	if err != nil || len(notes) != 0 {
		t.Errorf("Ready after a timed-out check: %q, %v; want ready, no note", notes, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("readiness took %v, want about the 50ms timeout", d)
	}
}

// TestNilWatcher: a backend whose engine reports no health is always
// healthy.
func TestNilWatcher(t *testing.T) {
	var w *health.Watcher
	if n := w.Notes(); n != nil {
		t.Errorf("nil watcher notes %q", n)
	}
	if notes, err := health.Ready(context.Background(), w); err != nil || notes != nil {
		t.Errorf("nil watcher readiness %q, %v", notes, err)
	}
}
