package access

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Refusal log sampling: an attacker repeating a refused request must not
// flood the log. Each kind of refusal writes its first sampleBurst lines
// per sampleWindow; the rest are counted, and the next line written says
// how many were left out ("suppressed").
const (
	sampleBurst  = 5
	sampleWindow = 10 * time.Second
)

// sampler decides which refusal lines are written. Kinds are a fixed set
// of strings, so its memory is bounded.
type sampler struct {
	mu    sync.Mutex
	now   func() time.Time
	kinds map[string]*sampleState
}

type sampleState struct {
	start      time.Time
	written    int
	suppressed int
}

func newSampler(now func() time.Time) *sampler {
	return &sampler{now: now, kinds: map[string]*sampleState{}}
}

// allow reports whether a line of kind may be written now, and how many
// lines of that kind were suppressed since the last one written.
func (s *sampler) allow(kind string) (bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	st := s.kinds[kind]
	if st == nil {
		st = &sampleState{start: now}
		s.kinds[kind] = st
	}
	if now.Sub(st.start) >= sampleWindow {
		st.start, st.written = now, 0
	}
	if st.written >= sampleBurst {
		st.suppressed++
		return false, 0
	}
	st.written++
	n := st.suppressed
	st.suppressed = 0
	return true, n
}

// refused logs a refusal of kind at level, sampled.
func (g *Guard) refused(level slog.Level, kind, msg string, args ...any) {
	ok, suppressed := g.sample.allow(kind)
	if !ok {
		return
	}
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	g.log.Log(context.Background(), level, msg, args...)
}
