package sidecar

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/session"
	"github.com/rcp-sidecar/rcp-sidecar/internal/statestore"
)

// stateStartCheck bounds the start-up ping of the shared state store: a
// store that does not answer is logged, never fatal (the replicas fall
// back to their own state until it answers).
const stateStartCheck = 2 * time.Second

// sharedStates holds the state store of each state section opened in
// this process: the engine's sessions and the access guard's limits use
// the same client, however many apps the configuration is wired through.
var sharedStates struct {
	mu sync.Mutex
	m  map[*config.State]*statestore.Store
}

// stateStore returns the store the state section names, opened once per
// process; nil when the section is absent.
func (a *Sidecar) stateStore() (*statestore.Store, error) {
	sc := a.cfg.State
	if sc == nil {
		return nil, nil
	}
	sharedStates.mu.Lock()
	defer sharedStates.mu.Unlock()
	if s, ok := sharedStates.m[sc]; ok {
		return s, nil
	}
	d := sc.WithDefaults()
	o := statestore.Options{URL: d.URL, Mode: d.Mode, Master: d.Master, Username: d.Username, Password: d.Password.Reveal(),
		Timeout: d.Timeout, FailureThreshold: d.FailureThreshold, OpenFor: d.OpenFor, Prefix: d.Prefix,
		Logger: a.log.With("component", "state")}
	// An app built only to hold a guard (no redactor) shares the process's
	// store without opening telemetry of its own.
	if !a.cfg.Telemetry.Disabled && a.redact != nil {
		o.Meter = a.tel().Meter()
	}
	s, err := statestore.Open(o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), stateStartCheck)
	defer cancel()
	if err := s.Ping(statestore.WithBudget(ctx)); err != nil {
		a.log.Warn("shared state store not answering at start-up: sessions and rate limits are per replica until it does", "err", err)
	} else {
		a.log.Info("shared state store on: sessions and rate limits are global", "mode", d.Mode, "timeout", d.Timeout)
	}
	if sharedStates.m == nil {
		sharedStates.m = map[*config.State]*statestore.Store{}
	}
	sharedStates.m[sc] = s
	return s, nil
}

// sharedSessions is the state store as the session package's Shared, nil
// (not a typed nil) without one.
func (a *Sidecar) sharedSessions() (session.Shared, error) {
	s, err := a.stateStore()
	if s == nil || err != nil {
		return nil, err
	}
	return s, nil
}

// withStateBudget gives every request through h one state store timeout
// to spend in all, when cfg names a store.
func withStateBudget(cfg *config.Config, h http.Handler) http.Handler {
	if cfg.State == nil {
		return h
	}
	return statestore.Middleware(h)
}
