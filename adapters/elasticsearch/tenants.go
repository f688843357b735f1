package elasticsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dslfilter"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eserrors"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/tenantidx"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
)

// Index isolation (tenancy mode "index", adapters.TenantIndex): each
// tenant's documents live in the index named by the template and the
// tenant (adapters.TenantIndexName), created from the configured body on
// the tenant's first write. BM25 statistics and the mapping are then per
// tenant. Capabilities come from the configured mapping, so every tenant
// index serves the same ones; the configured index (settings.index) is
// what callers without a tenant read, and they cannot write.

// probeTenant probes the tenant index name, creating it from the
// configured body first when create is set. nil, nil means the index does
// not exist (and create was not set). The tenant set (a.tenants) calls it
// once per index and keeps what it returns.
func (a *adapter) probeTenant(ctx context.Context, name string, create bool) (*probeState, error) {
	m, _, err := a.tenantCalls().Fetch(ctx, name, create)
	if m == nil || err != nil {
		return nil, err
	}
	base, err := a.probed()
	if err != nil {
		return nil, err
	}
	per, notes := perIndex(m)
	st := a.buildState(a.facts.Load(), per, notes, dslfilter.Analyze(m, filterOptions))
	st.ev.Target = name
	st.ev.Deterministic = base.ev.Deterministic
	return st, nil
}

// tenantCalls are the engine calls of a tenant index probe.
func (a *adapter) tenantCalls() tenantidx.Calls {
	return tenantidx.Calls{Engine: Name, Create: a.createIndex,
		Mapping: func(ctx context.Context, name string) ([]byte, error) {
			var body json.RawMessage
			_, err := a.getJSON(ctx, "/"+url.PathEscape(name)+"/_mapping", &body)
			return body, err
		},
		NotFound: func(err error) bool { return isStatus(err, 404) }}
}

// createIndex creates a tenant index from the configured body; one that
// exists already is fine (another writer, or another sidecar, made it).
func (a *adapter) createIndex(ctx context.Context, name string) error {
	_, err := a.do(ctx, http.MethodPut, "/"+url.PathEscape(name), a.tenancy.Mapping, false)
	var ee *Error
	if errors.As(err, &ee) && eserrors.AlreadyExists(ee.Cause) {
		return nil
	}
	return err
}

// configuredMapping is the probe's view of the configured tenant index
// body: its fields and filters, as one index named by the template.
func (a *adapter) configuredMapping() (map[string]map[string]field, []string, *dslfilter.Fields, error) {
	body, err := json.Marshal(map[string]json.RawMessage{a.tenancy.Template: a.tenancy.Mapping})
	var m *mapping.Mapping
	if err == nil {
		m, err = mapping.Read(body)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("elasticsearch: tenant index mapping: %w", err)
	}
	per, notes := perIndex(m)
	notes = append(notes, fmt.Sprintf("tenants are isolated by index: each in %s, created on its first write; callers without a tenant read %s and cannot write", a.tenancy.Template, a.cfg.Index))
	return per, notes, dslfilter.Analyze(m, filterOptions), nil
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
