package opensearch

import (
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dslfilter"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// translateFilter turns a validated §8 filter into query DSL (engines.md
// §2.5, dslfilter.Filter). Leaves on a text field run on its keyword sub-field
// from exact; a text field without one serves no exact operator.
func translateFilter(f mapping.Filter, exact map[string]string) (dsl.Query, error) {
	return dslfilter.Filter(f, func(c *mapping.Cond) (string, error) {
		if c.Type != mapping.TypeText {
			return c.Field, nil
		}
		if field := exact[c.Field]; field != "" {
			return field, nil
		}
		return "", rcp.OptionUnsupported(string(c.Op), "operator %s is not exact on text field %q", c.Op, c.Field)
	})
}
