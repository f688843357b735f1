package opensearch

import (
	"context"
	"net/http"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eshealth"
)

// Health implements adapters.HealthChecker: the index-level health of
// the configured index, alias or pattern (eshealth).
func (a *adapter) Health(ctx context.Context) (adapters.Health, error) {
	res, err := a.http.do(ctx, http.MethodGet, eshealth.Path(a.cfg.Index), nil, false)
	if res == nil {
		return adapters.Health{}, err
	}
	return eshealth.Parse(res.Status, res.Body)
}

var _ adapters.HealthChecker = (*adapter)(nil)
