package filterlang

import (
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Walk calls fn on every condition of f, depth first and children in
// order, and returns the first error fn returns (stopping there). A nil
// f has no conditions. Every traversal of a filter tree that visits its
// leaves goes through Walk.
func Walk(f Filter, fn func(*Cond) error) error {
	switch n := f.(type) {
	case *And:
		return walkAll(n.Children, fn)
	case *Or:
		return walkAll(n.Children, fn)
	case *Not:
		return Walk(n.Child, fn)
	case *Cond:
		return fn(n)
	}
	return nil
}

func walkAll(fs []Filter, fn func(*Cond) error) error {
	for _, c := range fs {
		if err := Walk(c, fn); err != nil {
			return err
		}
	}
	return nil
}

// Conds returns the conditions of f in Walk order.
func Conds(f Filter) []*Cond {
	var out []*Cond
	_ = Walk(f, func(c *Cond) error {
		out = append(out, c)
		return nil
	})
	return out
}

// CheckFieldOps rejects the first condition whose operator is advertised
// but not served by its field (§8: "operator is not allowed for that
// field" is -32602 with data.field "filter.<field>"). fieldOps returns the
// operators a field serves.
func CheckFieldOps(f Filter, fieldOps func(field string) []Op) *rcp.Error {
	var bad *rcp.Error
	_ = Walk(f, func(c *Cond) error {
		ops := fieldOps(c.Field)
		if !slices.Contains(ops, c.Op) {
			bad = rcp.InvalidParams("filter."+c.Field, "operator %q is not allowed for field %q (allowed: %v)", c.Op, c.Field, ops)
			return bad
		}
		return nil
	})
	return bad
}
