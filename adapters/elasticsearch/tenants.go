package elasticsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dslfilter"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Index isolation (tenancy mode "index", adapters.TenantIndex): each
// tenant's documents live in the index named by the template and the
// tenant (adapters.TenantIndexName), created from the configured body on
// the tenant's first write. BM25 statistics and the mapping are then per
// tenant. Capabilities come from the configured mapping, so every tenant
// index serves the same ones; the configured index (settings.index) is
// what callers without a tenant read, and they cannot write.

// tenantIndex is one tenant's index and its probed state.
type tenantIndex struct {
	name string
	mu   sync.Mutex // serialises creation and probing
	// state is the live index's probe, nil until it was seen to exist.
	state atomic.Pointer[probeState]
}

// tenantIndexFor returns the entry of tenant's index.
func (a *adapter) tenantIndexFor(tenant string) (*tenantIndex, error) {
	if a.tenancy == nil {
		return nil, errors.New("elasticsearch: a tenant index was asked for, but index isolation is not configured")
	}
	name, err := adapters.TenantIndexName(a.tenancy.Template, tenant)
	if err != nil {
		return nil, rcp.NewError(rcp.CodeUnauthorized, "this key's tenant has no valid index name")
	}
	a.tmu.Lock()
	defer a.tmu.Unlock()
	ti := a.tenants[name]
	if ti == nil {
		ti = &tenantIndex{name: name}
		a.tenants[name] = ti
	}
	return ti, nil
}

// tenantByName returns the entry of a tenant index name (a plan's Target).
func (a *adapter) tenantByName(name string) *tenantIndex {
	a.tmu.Lock()
	defer a.tmu.Unlock()
	return a.tenants[name]
}

// writeTenant returns the index a write goes to under index isolation:
// the caller's tenant's, created when create is set and it does not exist
// yet. ok is false when the adapter does not isolate tenants.
func (a *adapter) writeTenant(ctx context.Context, create bool) (ti *tenantIndex, st *probeState, ok bool, err error) {
	if a.tenancy == nil {
		return nil, nil, false, nil
	}
	t, scoped := adapters.TenantFrom(ctx)
	if !scoped || t.Name == "" {
		return nil, nil, true, rcp.NewError(rcp.CodeUnauthorized, "writes on this backend need a key with a tenant: each tenant has an index of its own")
	}
	if ti, err = a.tenantIndexFor(t.Name); err != nil {
		return nil, nil, true, err
	}
	st, err = a.probeTenant(ctx, ti, create)
	return ti, st, true, err
}

// probeTenant returns the probed state of ti, creating the index from the
// configured body first when create is set. nil, nil means the index does
// not exist (and create was not set).
func (a *adapter) probeTenant(ctx context.Context, ti *tenantIndex, create bool) (*probeState, error) {
	if st := ti.state.Load(); st != nil {
		return st, nil
	}
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if st := ti.state.Load(); st != nil {
		return st, nil
	}
	if create {
		if err := a.createIndex(ctx, ti.name); err != nil {
			return nil, err
		}
	}
	var body json.RawMessage
	_, err := a.getJSON(ctx, "/"+url.PathEscape(ti.name)+"/_mapping", &body)
	var raw map[string]indexMapping
	if err == nil {
		err = json.Unmarshal(body, &raw)
	}
	switch {
	case isStatus(err, 404) && !create:
		return nil, nil
	case err != nil:
		return nil, err
	case len(raw) != 1:
		return nil, fmt.Errorf("elasticsearch: tenant index %s resolves to %d indices (an alias or pattern holds its name)", ti.name, len(raw))
	}
	if _, ok := raw[ti.name]; !ok {
		return nil, fmt.Errorf("elasticsearch: tenant index name %s is an alias of another index", ti.name)
	}
	base, err := a.probed()
	if err != nil {
		return nil, err
	}
	var notes []string
	per := map[string]map[string]field{ti.name: {}}
	flatten("", raw[ti.name].Mappings.Properties, per[ti.name], &notes)
	filters, err := dslfilter.Analyze(body, dslfilter.Options{IgnoredField: true, UnsignedLong: true})
	if err != nil {
		return nil, fmt.Errorf("elasticsearch: tenant index %s: %w", ti.name, err)
	}
	st := a.buildState(a.facts.Load(), per, notes, filters)
	st.ev.Target = ti.name
	st.ev.Deterministic = base.ev.Deterministic
	ti.state.Store(st)
	return st, nil
}

// createIndex creates a tenant index from the configured body; one that
// exists already is fine (another writer, or another sidecar, made it).
func (a *adapter) createIndex(ctx context.Context, name string) error {
	_, err := a.do(ctx, http.MethodPut, "/"+url.PathEscape(name), a.tenancy.Mapping, false)
	var ee *Error
	if errors.As(err, &ee) && slices.Contains(ee.Cause.Types(), "resource_already_exists_exception") {
		return nil
	}
	return err
}

// stateFor is the state a plan for target decodes with: the tenant
// index's own once probed, else the configured one.
func (a *adapter) stateFor(target string, base *probeState) *probeState {
	if a.tenancy == nil || target == a.cfg.Index {
		return base
	}
	if ti := a.tenantByName(target); ti != nil {
		if st := ti.state.Load(); st != nil {
			return st
		}
	}
	return base
}

// verifyTenantTarget probes a tenant index a search reads, once, so that a
// name taken by an alias of other indices is refused rather than read.
func (a *adapter) verifyTenantTarget(ctx context.Context, target string) error {
	if a.tenancy == nil || target == a.cfg.Index {
		return nil
	}
	ti := a.tenantByName(target)
	if ti == nil || ti.state.Load() != nil {
		return nil
	}
	_, err := a.probeTenant(ctx, ti, false)
	return err
}

// configuredMapping is the probe's view of the configured tenant index
// body: its fields, as one index named by the template.
func (a *adapter) configuredMapping() (map[string]map[string]field, []string, error) {
	var body indexMapping
	if err := json.Unmarshal(a.tenancy.Mapping, &body); err != nil {
		return nil, nil, fmt.Errorf("elasticsearch: tenant index mapping: %w", err)
	}
	var notes []string
	per := map[string]map[string]field{a.tenancy.Template: {}}
	flatten("", body.Mappings.Properties, per[a.tenancy.Template], &notes)
	notes = append(notes, fmt.Sprintf("tenants are isolated by index: each in %s, created on its first write; callers without a tenant read %s and cannot write", a.tenancy.Template, a.cfg.Index))
	return per, notes, nil
}

// configuredDeterminism is probeDeterminism for the configured body: no
// replicas and no approximate vector search.
func (a *adapter) configuredDeterminism(ev *capability.Evidence) bool {
	var body struct {
		Settings map[string]any `json:"settings"`
	}
	_ = json.Unmarshal(a.tenancy.Mapping, &body)
	replicas := body.Settings["number_of_replicas"]
	if idx, ok := body.Settings["index"].(map[string]any); ok && replicas == nil {
		replicas = idx["number_of_replicas"]
	}
	if replicas == nil {
		replicas = body.Settings["index.number_of_replicas"]
	}
	if fmt.Sprint(replicas) != "0" {
		ev.Notes = append(ev.Notes, "tenant indices may have replicas: repeated requests may order ties differently")
		return false
	}
	for _, vf := range ev.VectorFields {
		if vf.Indexed {
			return false
		}
	}
	return true
}
