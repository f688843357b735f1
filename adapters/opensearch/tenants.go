package opensearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Index isolation (tenancy mode "index", adapters.TenantIndex), as in the
// Elasticsearch adapter: each tenant's documents live in the index named
// by the template and the tenant, created from the configured body on the
// tenant's first write, so BM25 statistics and the mapping are per
// tenant. Capabilities come from the configured body; callers without a
// tenant read settings.index and cannot write.

// tenantIndex is one tenant's index and its probed schema.
type tenantIndex struct {
	name string
	mu   sync.Mutex // serialises creation and probing
	// schema is the live index's, nil until it was seen to exist.
	schema atomic.Pointer[schema]
}

// tenantIndexFor returns the entry of tenant's index.
func (a *adapter) tenantIndexFor(tenant string) (*tenantIndex, error) {
	if a.tenancy == nil {
		return nil, errors.New("opensearch: a tenant index was asked for, but index isolation is not configured")
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

func (a *adapter) tenantByName(name string) *tenantIndex {
	a.tmu.Lock()
	defer a.tmu.Unlock()
	return a.tenants[name]
}

// writeTenant returns the index a write goes to under index isolation
// (the caller's tenant's, created when create is set) and its schema,
// nil when the index does not exist. ok is false without isolation.
func (a *adapter) writeTenant(ctx context.Context, create bool) (ti *tenantIndex, s *schema, ok bool, err error) {
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
	s, err = a.probeTenant(ctx, ti, create)
	return ti, s, true, err
}

// probeTenant returns the schema of ti's live index, creating it from the
// configured body first when create is set; nil, nil when it does not
// exist. A name that resolves to other indices (an alias) is an error.
func (a *adapter) probeTenant(ctx context.Context, ti *tenantIndex, create bool) (*schema, error) {
	if s := ti.schema.Load(); s != nil {
		return s, nil
	}
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if s := ti.schema.Load(); s != nil {
		return s, nil
	}
	if create {
		if err := a.createIndex(ctx, ti.name); err != nil {
			return nil, err
		}
	}
	ix := "/" + url.PathEscape(ti.name)
	res, err := a.http.do(ctx, http.MethodGet, ix+"/_mapping", nil, false)
	switch {
	case isNotFound(err) && !create:
		return nil, nil
	case err != nil:
		return nil, err
	}
	var byIndex map[string]json.RawMessage
	if err := json.Unmarshal(res.Body, &byIndex); err != nil {
		return nil, fmt.Errorf("opensearch: decode mapping of %s: %w", ti.name, err)
	}
	if _, own := byIndex[ti.name]; len(byIndex) != 1 || !own {
		return nil, fmt.Errorf("opensearch: tenant index name %s resolves to other indices (an alias holds it)", ti.name)
	}
	settings, err := a.http.do(ctx, http.MethodGet, ix+"/_settings", nil, false)
	if err != nil {
		return nil, err
	}
	base := a.raw.Load()
	if base == nil {
		return nil, errNotProbed
	}
	r := *base
	r.Mapping, r.Settings, r.Count = res.Body, settings.Body, nil
	s, err := buildSchema(a.cfg, &r)
	if err != nil {
		return nil, err
	}
	s.ev.Target = ti.name
	ti.schema.Store(s)
	return s, nil
}

func isNotFound(err error) bool {
	var oe *Error
	return errors.As(err, &oe) && oe.Status == http.StatusNotFound
}

// createIndex creates a tenant index from the configured body; one that
// exists already is fine.
func (a *adapter) createIndex(ctx context.Context, name string) error {
	_, err := a.http.do(ctx, http.MethodPut, "/"+url.PathEscape(name), a.tenancy.Mapping, false)
	var oe *Error
	if errors.As(err, &oe) && oe.Cause != nil && slices.Contains(oe.Cause.Types(), "resource_already_exists_exception") {
		return nil
	}
	return err
}

// schemaFor is the schema a plan for target decodes with: the tenant
// index's own once probed, else the configured one.
func (a *adapter) schemaFor(target string, base *schema) *schema {
	if a.tenancy == nil || target == a.cfg.Index {
		return base
	}
	if ti := a.tenantByName(target); ti != nil {
		if s := ti.schema.Load(); s != nil {
			return s
		}
	}
	return base
}

// verifyTenantTarget probes a tenant index a search reads, once, so that a
// name held by an alias of other indices is refused rather than read.
func (a *adapter) verifyTenantTarget(ctx context.Context, target string) error {
	if a.tenancy == nil || target == a.cfg.Index {
		return nil
	}
	ti := a.tenantByName(target)
	if ti == nil || ti.schema.Load() != nil {
		return nil
	}
	_, err := a.probeTenant(ctx, ti, false)
	return err
}

// configuredResponses are the mapping and settings responses the probe
// would read from an index created from the configured body.
func (a *adapter) configuredResponses() (mapping, settings []byte, err error) {
	var body struct {
		Settings map[string]any  `json:"settings"`
		Mappings json.RawMessage `json:"mappings"`
	}
	if err := json.Unmarshal(a.tenancy.Mapping, &body); err != nil {
		return nil, nil, fmt.Errorf("opensearch: tenant index mapping: %w", err)
	}
	name := a.tenancy.Template
	if mapping, err = json.Marshal(map[string]any{name: map[string]any{"mappings": body.Mappings}}); err != nil {
		return nil, nil, err
	}
	index := map[string]string{"number_of_shards": "1", "number_of_replicas": "1", "knn": "false"}
	flat := map[string]any{}
	flattenSettings("", body.Settings, flat)
	for k, v := range flat {
		if k = strings.TrimPrefix(k, "index."); index[k] != "" {
			index[k] = fmt.Sprint(v)
		}
	}
	settings, err = json.Marshal(map[string]any{name: map[string]any{"settings": map[string]any{"index": index}}})
	return mapping, settings, err
}

// flattenSettings writes nested settings as dotted keys.
func flattenSettings(prefix string, m map[string]any, out map[string]any) {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			flattenSettings(prefix+k+".", sub, out)
			continue
		}
		out[prefix+k] = v
	}
}
