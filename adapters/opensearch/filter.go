package opensearch

import (
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dslfilter"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// translateFilter turns a validated §8 filter into query DSL (engines.md
// §2.5, dslfilter.Filter). Leaves on a text field run on its keyword sub-field
// from exact; a text field without one serves no exact operator. millis
// lists the date fields that store milliseconds.
func translateFilter(f mapping.Filter, exact map[string]string, millis map[string]bool) (dsl.Query, error) {
	return dslfilter.Filter(f, func(c *mapping.Cond) (dslfilter.Field, error) {
		if c.Type != mapping.TypeText {
			return dslfilter.Field{Name: c.Field, Millis: millis[c.Field]}, nil
		}
		if field := exact[c.Field]; field != "" {
			return dslfilter.Field{Name: field}, nil
		}
		return dslfilter.Field{}, rcp.OptionUnsupported(string(c.Op), "operator %s is not exact on text field %q", c.Op, c.Field)
	})
}
