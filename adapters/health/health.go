// Package health watches the health the engine reports for what a backend
// serves — its Elasticsearch or OpenSearch index or alias, its Qdrant
// collection — never the whole cluster, so another index's trouble is not
// ours. A Watcher caches the last report for a short time, runs at most
// one check at a time within a timeout, and never makes a request wait on
// the engine: requests read the cached report (Notes), readiness waits at
// most the check's timeout (Ready).
//
// Red makes the backend not ready; yellow leaves it ready and says so in
// the readiness body and in usage.notes; green says nothing. Retrieves are
// attempted whatever the health: what a lost shard costs an answer is the
// adapter's precise error, not a guess made from the health.
package health

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// Defaults applied to zero Options fields.
const (
	DefaultTTL     = 5 * time.Second
	DefaultTimeout = 2 * time.Second
)

// Options tune a Watcher.
type Options struct {
	// TTL is how long a report is reused before the next check.
	TTL time.Duration
	// Timeout bounds one check (the engine gets a shorter server-side
	// timeout from the adapter).
	Timeout time.Duration
	// Logger, labelled with the backend, receives changes of health
	// (not the first green) and failed checks (debug).
	Logger *slog.Logger
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Watcher caches a backend's health. A nil *Watcher is always healthy.
type Watcher struct {
	backend string
	c       adapters.HealthChecker
	opts    Options
	log     *slog.Logger

	mu       sync.Mutex
	last     adapters.Health
	at       time.Time     // when last was taken; zero: never
	inflight chan struct{} // closed when the running check ends; nil: none
}

// New watches backend's health through c.
func New(backend string, c adapters.HealthChecker, opts Options) *Watcher {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{backend: backend, c: c, opts: opts, log: log}
}

// Backend is the name of the watched backend ("" for a nil Watcher).
func (w *Watcher) Backend() string {
	if w == nil {
		return ""
	}
	return w.backend
}

// Cached returns the last report without waiting, and starts a check in
// the background when it is older than the TTL and none is running.
func (w *Watcher) Cached() adapters.Health {
	if w == nil {
		return adapters.Health{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.refreshLocked()
	return w.last
}

// Current returns a report no older than the TTL, waiting for the check
// that makes it at most until ctx is done (then the last one).
func (w *Watcher) Current(ctx context.Context) adapters.Health {
	if w == nil {
		return adapters.Health{}
	}
	w.mu.Lock()
	done := w.refreshLocked()
	w.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// refreshLocked starts a check when the report is stale and none runs,
// and returns the channel closed when the running check ends (nil when
// the report is fresh).
func (w *Watcher) refreshLocked() <-chan struct{} {
	if w.inflight != nil {
		return w.inflight
	}
	if !w.at.IsZero() && w.opts.Now().Sub(w.at) < w.opts.TTL {
		return nil
	}
	done := make(chan struct{})
	w.inflight = done
	go w.check(done)
	return done
}

// check runs one check, detached from any request, and records it.
func (w *Watcher) check(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), w.opts.Timeout)
	r, err := w.c.Health(ctx)
	cancel()
	if err != nil {
		w.log.Debug("health check failed", "err", err)
		r = adapters.Health{}
	}
	w.mu.Lock()
	if r.Status != w.last.Status && (w.last.Status != adapters.HealthUnknown || r.Status != adapters.HealthGreen) {
		w.log.Info("backend health changed", "from", describe(w.last), "to", describe(r))
	}
	w.last, w.at, w.inflight = r, w.opts.Now(), nil
	w.mu.Unlock()
	close(done)
}

func describe(r adapters.Health) string {
	if r.Status == adapters.HealthUnknown {
		return "unknown"
	}
	return r.State
}

// Notes are what an answer says while the health is not green: none when
// green or unknown. They never wait for the engine (Cached).
func (w *Watcher) Notes() []string {
	if n := Note(w.Backend(), w.Cached()); n != "" {
		return []string{n}
	}
	return nil
}

// Note says what r means for answers: "" when green or unknown.
func Note(backend string, r adapters.Health) string {
	switch r.Status {
	case adapters.HealthYellow:
		return fmt.Sprintf("backend %s: %s health %s: answers are complete, some shard copies or optimizations are pending", backend, r.Of, r.State)
	case adapters.HealthRed:
		return fmt.Sprintf("backend %s: %s health %s: part of the data is unavailable; a retrieve that needs it fails with a precise error", backend, r.Of, r.State)
	}
	return ""
}

// Ready is the readiness of the watched backends: an error naming each
// red one (not ready), else the notes of the yellow ones (ready). It
// waits for fresh reports at most until ctx is done.
func Ready(ctx context.Context, ws ...*Watcher) (notes []string, err error) {
	var red []string
	for _, w := range ws {
		if w == nil {
			continue
		}
		r := w.Current(ctx)
		switch r.Status {
		case adapters.HealthRed:
			red = append(red, fmt.Sprintf("backend %s: %s health %s", w.backend, r.Of, r.State))
		case adapters.HealthYellow:
			notes = append(notes, fmt.Sprintf("backend %s: %s health %s", w.backend, r.Of, r.State))
		}
	}
	if len(red) > 0 {
		return notes, &NotReadyError{Reasons: red}
	}
	return notes, nil
}

// NotReadyError names the red backends.
type NotReadyError struct{ Reasons []string }

// Error implements error.
func (e *NotReadyError) Error() string { return strings.Join(e.Reasons, "; ") }
