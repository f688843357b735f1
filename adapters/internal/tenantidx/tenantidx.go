// Package tenantidx is the bookkeeping of index isolation (tenancy mode
// "index", adapters.TenantIndex) that the Elasticsearch and OpenSearch
// adapters share: which tenant index a caller's tenant maps to, and each
// tenant index's probed state, learnt once and then read lock-free. What
// the state is, and how an index is created and probed, stays with the
// adapter: Set is generic over the state type S.
package tenantidx

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Index is one tenant's index and its probed state.
type Index[S any] struct {
	// Name is the index name (adapters.TenantIndexName of the tenant).
	Name string
	mu   sync.Mutex // serialises creation and probing
	// state is the live index's probe, nil until it was seen to exist.
	state atomic.Pointer[S]
}

// State is the index's probed state, nil until it was seen to exist.
func (ix *Index[S]) State() *S { return ix.state.Load() }

// ProbeFunc creates (when create is set) and probes the index named name.
// It returns nil, nil when the index does not exist and create is not
// set.
type ProbeFunc[S any] func(ctx context.Context, name string, create bool) (*S, error)

// Set is an adapter's tenant indices by name. A Set whose tenancy is nil
// isolates nothing: Enabled is false and For fails.
type Set[S any] struct {
	engine     string // prefixes errors, e.g. "elasticsearch"
	tenancy    *adapters.TenantIndex
	configured string // the configured index, read by callers without a tenant
	probe      ProbeFunc[S]

	mu      sync.Mutex
	tenants map[string]*Index[S]
}

// New returns the tenant indices of an engine adapter. configured is the
// configured index (settings.index); probe creates and probes one index.
func New[S any](engine string, tenancy *adapters.TenantIndex, configured string, probe ProbeFunc[S]) *Set[S] {
	return &Set[S]{engine: engine, tenancy: tenancy, configured: configured, probe: probe, tenants: map[string]*Index[S]{}}
}

// Enabled reports whether the adapter isolates tenants by index.
func (s *Set[S]) Enabled() bool { return s != nil && s.tenancy != nil }

// For returns the entry of tenant's index.
func (s *Set[S]) For(tenant string) (*Index[S], error) {
	if !s.Enabled() {
		return nil, errors.New(s.engine + ": a tenant index was asked for, but index isolation is not configured")
	}
	name, err := adapters.TenantIndexName(s.tenancy.Template, tenant)
	if err != nil {
		return nil, rcp.NewError(rcp.CodeUnauthorized, "this key's tenant has no valid index name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ix := s.tenants[name]
	if ix == nil {
		ix = &Index[S]{Name: name}
		s.tenants[name] = ix
	}
	return ix, nil
}

// ByName returns the entry of a tenant index name (a plan's Target), nil
// when no tenant's index has that name yet.
func (s *Set[S]) ByName(name string) *Index[S] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tenants[name]
}

// Write returns the index a write goes to under index isolation: the
// caller's tenant's, created when create is set and it does not exist
// yet, and its state (nil when it does not exist). ok is false when the
// adapter does not isolate tenants.
func (s *Set[S]) Write(ctx context.Context, create bool) (ix *Index[S], st *S, ok bool, err error) {
	if !s.Enabled() {
		return nil, nil, false, nil
	}
	t, scoped := adapters.TenantFrom(ctx)
	if !scoped || t.Name == "" {
		return nil, nil, true, rcp.NewError(rcp.CodeUnauthorized, "writes on this backend need a key with a tenant: each tenant has an index of its own")
	}
	if ix, err = s.For(t.Name); err != nil {
		return nil, nil, true, err
	}
	st, err = s.Probe(ctx, ix, create)
	return ix, st, true, err
}

// Probe returns the probed state of ix, creating the index first when
// create is set. nil, nil means the index does not exist (and create was
// not set). A state once probed is kept; concurrent callers probe once.
func (s *Set[S]) Probe(ctx context.Context, ix *Index[S], create bool) (*S, error) {
	if st := ix.state.Load(); st != nil {
		return st, nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if st := ix.state.Load(); st != nil {
		return st, nil
	}
	st, err := s.probe(ctx, ix.Name, create)
	if err != nil || st == nil {
		return nil, err
	}
	ix.state.Store(st)
	return st, nil
}

// StateFor is the state a plan for target decodes with: the tenant
// index's own once probed, else base (the configured index's).
func (s *Set[S]) StateFor(target string, base *S) *S {
	if !s.Enabled() || target == s.configured {
		return base
	}
	if ix := s.ByName(target); ix != nil {
		if st := ix.state.Load(); st != nil {
			return st
		}
	}
	return base
}

// Verify probes a tenant index a search reads, once, so that a name
// taken by an alias of other indices is refused rather than read.
func (s *Set[S]) Verify(ctx context.Context, target string) error {
	if !s.Enabled() || target == s.configured {
		return nil
	}
	ix := s.ByName(target)
	if ix == nil || ix.state.Load() != nil {
		return nil
	}
	_, err := s.Probe(ctx, ix, false)
	return err
}
