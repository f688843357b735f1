package capability

import (
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
)

// AllowedOps returns the operators the engine serves exactly on this field:
// Ops (every operator §8 allows for Type when Ops is nil), restricted to
// the §8 table for Type, in filterlang.AllOps order.
func (ff FilterField) AllowedOps() []filterlang.Op {
	typed := filterlang.AllowedOps(ff.Type)
	if ff.Ops == nil {
		return sortOps(typed)
	}
	var out []filterlang.Op
	for _, op := range ff.Ops {
		if slices.Contains(typed, op) && !slices.Contains(out, op) {
			out = append(out, op)
		}
	}
	return sortOps(out)
}

// OpsFor returns the operators the evidence proves for the filter field
// named field (see FilterField.AllowedOps), or nil when the probe found
// no such field. Policy narrowing is not applied; see FieldOps.
func (ev *Evidence) OpsFor(field string) []filterlang.Op {
	for _, ff := range ev.FilterFields {
		if ff.Name == field {
			return ff.AllowedOps()
		}
	}
	return nil
}

// FieldOps returns the operators a client may use on ff once policy p has
// narrowed them: ff.AllowedOps() ∩ p.Operators, nil when p excludes the
// field. A field left with no operator is not advertised (§8: every
// advertised field must be filterable with some advertised operator).
func FieldOps(ff FilterField, p Policy) []filterlang.Op {
	if !p.allowsField(ff.Name) {
		return nil
	}
	var out []filterlang.Op
	for _, op := range ff.AllowedOps() {
		if p.allowsOp(op) {
			out = append(out, op)
		}
	}
	return out
}

// sortOps orders ops as filterlang.AllOps does, so lists compare stably.
func sortOps(ops []filterlang.Op) []filterlang.Op {
	var out []filterlang.Op
	for _, op := range filterlang.AllOps {
		if slices.Contains(ops, op) {
			out = append(out, op)
		}
	}
	return out
}
