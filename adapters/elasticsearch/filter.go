package elasticsearch

import (
	"fmt"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dslfilter"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
)

// translateFilter turns a validated filter into a DSL query (§8 semantics,
// engines.md §2.5, dslfilter.Filter). native maps RCP field names to the ES
// fields the leaves run on (a text field's keyword sub-field).
func translateFilter(f mapping.Filter, native map[string]string) (dsl.Query, error) {
	return dslfilter.Filter(f, func(c *mapping.Cond) (string, error) {
		field, ok := native[c.Field]
		if !ok {
			return "", fmt.Errorf("elasticsearch: filter field %q was not probed", c.Field)
		}
		return field, nil
	})
}
