package opensearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eserrors"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/tenantidx"
)

// Index isolation (tenancy mode "index", adapters.TenantIndex), as in the
// Elasticsearch adapter: each tenant's documents live in the index named
// by the template and the tenant, created from the configured body on the
// tenant's first write, so BM25 statistics and the mapping are per
// tenant. Capabilities come from the configured body; callers without a
// tenant read settings.index and cannot write.

// probeTenant returns the schema of the live tenant index name, creating
// it from the configured body first when create is set; nil, nil when it
// does not exist. A name that resolves to other indices (an alias) is an
// error. The tenant set (a.tenants) calls it once per index and keeps
// what it returns.
func (a *adapter) probeTenant(ctx context.Context, name string, create bool) (*schema, error) {
	m, body, err := a.tenantCalls().Fetch(ctx, name, create)
	if m == nil || err != nil {
		return nil, err
	}
	settings, err := a.http.do(ctx, http.MethodGet, "/"+url.PathEscape(name)+"/_settings", nil, false)
	if err != nil {
		return nil, err
	}
	base := a.raw.Load()
	if base == nil {
		return nil, errNotProbed
	}
	r := *base
	r.Mapping, r.Settings, r.Count = body, settings.Body, nil
	s, err := buildSchema(a.cfg, &r)
	if err != nil {
		return nil, err
	}
	s.ev.Target = name
	return s, nil
}

// tenantCalls are the engine calls of a tenant index probe.
func (a *adapter) tenantCalls() tenantidx.Calls {
	return tenantidx.Calls{Engine: Name, Create: a.createIndex,
		Mapping: func(ctx context.Context, name string) ([]byte, error) {
			res, err := a.http.do(ctx, http.MethodGet, "/"+url.PathEscape(name)+"/_mapping", nil, false)
			if err != nil {
				return nil, err
			}
			return res.Body, nil
		},
		NotFound: isNotFound}
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
	if errors.As(err, &oe) && eserrors.AlreadyExists(oe.Cause) {
		return nil
	}
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
