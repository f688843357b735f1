package elasticsearch

import (
	"fmt"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dslfilter"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
)

// translateFilter turns a validated filter into a DSL query (§8 semantics,
// engines.md §2.5, dslfilter.Filter). native maps RCP field names to the ES
// fields the leaves run on (a text field's keyword sub-field); fields
// gives their types (millisecond dates).
func translateFilter(f mapping.Filter, native map[string]string, fields map[string]field) (dsl.Query, error) {
	return dslfilter.Filter(f, func(c *mapping.Cond) (dslfilter.Field, error) {
		name, ok := native[c.Field]
		if !ok {
			return dslfilter.Field{}, fmt.Errorf("elasticsearch: filter field %q was not probed", c.Field)
		}
		return dslfilter.Field{Name: name, Millis: fields[c.Field].Type == "date"}, nil
	})
}
