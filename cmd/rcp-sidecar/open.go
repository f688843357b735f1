package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/health"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// openOptions select how openBackend opens a backend. The zero value (with
// a logger) opens it plainly: a failed first probe fails the open.
type openOptions struct {
	// log is the base logger; openBackend labels it with the backend.
	log *slog.Logger
	// emb is the embedder handed to the adapter and the Engine; nil: none.
	emb adapters.Embedder
	// obs decorates the adapter with telemetry; nil: no decorator.
	obs *app
	// registry finds the backend's engine; nil: the binary's engines.
	registry *adapters.Registry
	// adapter, when set, is served as is instead of being opened from
	// the registry (the bundled demo corpus).
	adapter adapters.Adapter
	// resilient puts the adapter behind the resilient decorator; watch,
	// when set, is handed the decorator (circuit metrics).
	resilient bool
	watch     func(backend string, ra *resilient.Adapter)
	// late starts the backend even when its first probe fails: the
	// adapter is kept, opened.engine is nil and opened.probeErr says why,
	// for the caller to retry (standby, late federation members).
	late bool
	// federated checks the backend's name and weight as a federation
	// member before anything is opened; a failed check is a memberError.
	federated bool
}

// opened is a backend openBackend opened: its adapter as the Engine sees
// it, and the Engine unless a late start is still pending.
type opened struct {
	b   *config.Backend
	log *slog.Logger
	ad  adapters.Adapter   // what the Engine is built over
	ra  *resilient.Adapter // the decorator, when resilient
	// health watches the engine's health of the backend's index or
	// collection (nil when the adapter does not report it); a resilient
	// backend's answers carry its notes.
	health *health.Watcher
	opts   retrieval.Options // the options the Engine is built with
	// engine is nil while a late start is pending; probeErr is then the
	// first probe's error.
	engine   *retrieval.Engine
	probeErr error
}

// Close releases what openBackend opened: the Engine (which closes its
// adapter) or, with no Engine yet, the adapter.
func (o *opened) Close() {
	switch {
	case o.engine != nil:
		o.engine.Close()
	case o.ra != nil:
		o.ra.Close()
	default:
		o.ad.Close()
	}
}

// memberError is a backend that cannot be a federation member whatever
// its engine's state.
type memberError struct{ error }

func (e memberError) Unwrap() error { return e.error }

// openBackend opens b: registry lookup → adapter (the factory validated
// settings are its Config) → telemetry decorator → resilient decorator →
// Engine, which probes once. On any failure it closes what it opened.
func openBackend(ctx context.Context, b *config.Backend, o openOptions) (_ *opened, err error) {
	if o.federated {
		if err := federationMember(b); err != nil {
			return nil, err
		}
	}
	log := o.log.With("backend", b.Name)
	if b.Engine != "" {
		log = log.With("engine", b.Engine)
	}
	ad := o.adapter
	if ad == nil {
		if ad, err = openAdapter(ctx, b, o.registry, log, o.emb); err != nil {
			return nil, err
		}
	}
	hc, _ := ad.(adapters.HealthChecker)
	if o.obs != nil {
		ad = o.obs.observeAdapter(ad, b) // a span per attempt
	}
	op := &opened{b: b, log: log, ad: ad, opts: engineOptions(b.Policy, b.Tenancy, o.emb, log)}
	defer func() {
		if err != nil {
			op.Close()
		}
	}()
	if o.obs != nil && o.obs.cursor != nil {
		op.opts.CursorKeys = o.obs.cursor
	}
	if o.obs != nil { // reranker, session, feedback (extras.go)
		if err = o.obs.applyExtras(ctx, &op.opts, b.Name); err != nil {
			return nil, err
		}
	}
	if hc != nil {
		op.health = health.New(b.Name, hc, health.Options{Logger: log})
	}
	if o.resilient {
		ro := resilientOptions(b, log)
		if op.health != nil {
			ro.Notes = op.health.Notes
		}
		op.ra = resilient.New(ad, ro)
		if o.watch != nil {
			o.watch(b.Name, op.ra)
		}
		op.ad = op.ra.AsAdapter()
	}
	if op.engine, err = retrieval.NewEngine(ctx, op.ad, op.opts); err != nil {
		if !o.late {
			return nil, fmt.Errorf("probe backend %s: %w", b.Name, err)
		}
		op.probeErr, err = err, nil
	}
	return op, nil
}

// openAdapter opens b's adapter with the factory of its engine.
func openAdapter(ctx context.Context, b *config.Backend, reg *adapters.Registry, log *slog.Logger, emb adapters.Embedder) (adapters.Adapter, error) {
	if reg == nil {
		reg = newRegistry()
	}
	f, ok := reg.Lookup(b.Engine)
	if !ok {
		return nil, fmt.Errorf("open backend %s: unknown engine %q", b.Name, b.Engine)
	}
	deps, err := backendDeps(b, log, emb)
	if err != nil {
		return nil, err
	}
	ad, err := f.Open(ctx, b.Config, deps)
	if err != nil {
		return nil, fmt.Errorf("open backend %s: %w", b.Name, err)
	}
	return ad, nil
}

// federationMember checks what a federation requires of a backend.
func federationMember(b *config.Backend) error {
	if w := b.FusionWeight(); w <= 0 {
		return memberError{fmt.Errorf("backend %s: weight must be positive, got %v", b.Name, w)}
	}
	if !validEngineID(b.Name) {
		return memberError{fmt.Errorf("backend %q: a federated backend name may hold only letters, digits, '.', '_' and '-' (it is a URL path segment)", b.Name)}
	}
	return nil
}

// isMemberError reports a memberError.
func isMemberError(err error) bool {
	var me memberError
	return errors.As(err, &me)
}
