package opensearch

import (
	"fmt"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dslfilter"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
)

// translateFilter turns a validated §8 filter into query DSL
// (docs/engines.md §2.5, dslfilter.Filter); plan says how each offered field
// translates.
func translateFilter(f filterlang.Filter, plan map[string]dslfilter.Field) (dsl.Query, error) {
	return dslfilter.Filter(f, func(c *filterlang.Cond) (dslfilter.Field, error) {
		field, ok := plan[c.Field]
		if !ok {
			return dslfilter.Field{}, fmt.Errorf("opensearch: filter field %q was not probed", c.Field)
		}
		return field, nil
	})
}
