package tenantidx

import (
	"context"
	"fmt"

	"github.com/rcp-sidecar/rcp-sidecar/mapping"
)

// Calls are the engine calls a tenant index probe makes, which the
// Elasticsearch-family adapters make alike.
type Calls struct {
	// Engine names the adapter in errors.
	Engine string
	// Create creates the index from the configured body; an index that
	// exists already is no error.
	Create func(ctx context.Context, name string) error
	// Mapping returns the GET /<name>/_mapping body.
	Mapping func(ctx context.Context, name string) ([]byte, error)
	// NotFound reports whether an error of Mapping says the index does not
	// exist.
	NotFound func(error) bool
}

// Fetch is the part of a tenant index probe both adapters share: it
// creates the index name first when create is set, reads its mapping into
// the mapping model and checks that the mapping is the index's own (not
// an alias or pattern that resolves to other indices). It returns the
// model and the body it was read from; nil, nil, nil when the index does
// not exist and create was not set. The adapter derives its state from
// the model.
func (c Calls) Fetch(ctx context.Context, name string, create bool) (*mapping.Mapping, []byte, error) {
	if create {
		if err := c.Create(ctx, name); err != nil {
			return nil, nil, err
		}
	}
	body, err := c.Mapping(ctx, name)
	switch {
	case err != nil && c.NotFound(err) && !create:
		return nil, nil, nil
	case err != nil:
		return nil, nil, err
	}
	m, err := mapping.Read(body)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: tenant index %s: %w", c.Engine, name, err)
	}
	if len(m.Indices) != 1 || m.Index(name) == nil {
		return nil, nil, fmt.Errorf("%s: tenant index name %s resolves to other indices (an alias or pattern holds it)", c.Engine, name)
	}
	return m, body, nil
}
