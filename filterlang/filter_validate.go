package filterlang

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Limits on an untrusted filter tree (§15.5). Exceeding any of them is
// -32602 with data.field "filter" (or "filter.<name>" for a set).
const (
	// MaxFilterDepth is the deepest allowed clause nesting; the root is depth 1.
	MaxFilterDepth = 32
	// MaxFilterNodes is the largest allowed number of clauses (and/or/not/leaf).
	MaxFilterNodes = 1024
	// MaxFilterSetSize is the largest allowed in/nin value array.
	MaxFilterSetSize = 1024
)

// filterRoot is the data.field used for structural filter errors.
const filterRoot = "filter"

// allowedOps is the §8 operator × field-type table.
var allowedOps = map[FieldType][]Op{
	TypeKeyword: {OpEq, OpNe, OpIn, OpNin, OpContains, OpExists},
	TypeText:    {OpEq, OpNe, OpIn, OpNin, OpContains, OpExists},
	TypeInt:     {OpEq, OpNe, OpGt, OpGte, OpLt, OpLte, OpIn, OpNin, OpExists},
	TypeFloat:   {OpEq, OpNe, OpGt, OpGte, OpLt, OpLte, OpIn, OpNin, OpExists},
	TypeDate:    {OpEq, OpNe, OpGt, OpGte, OpLt, OpLte, OpIn, OpNin, OpExists},
	TypeBool:    {OpEq, OpNe, OpIn, OpNin, OpExists},
	TypeGeo:     {OpExists},
}

// AllowedOps returns the operators §8 allows on a field of type t, in
// AllOps order; nil for an unknown type. `contains` is substring on text and
// element membership on keyword (a keyword field holding an array matches
// when any element equals the value). The result is a fresh slice.
func AllowedOps(t FieldType) []Op { return slices.Clone(allowedOps[t]) }

// opAllowed reports whether the §8 table allows op on a field of type t.
func opAllowed(t FieldType, op Op) bool { return slices.Contains(allowedOps[t], op) }

// ValidateFilter parses an untrusted §8 filter tree into the sealed AST,
// checking field names against fields, operators against the advertised ops
// (nil advertises none) and values against the field type (§8, §15.4).
//
// Absent, JSON null and the empty object {} mean "no filter": (nil, nil).
// A clause holds exactly one of and/or/not or a field+op leaf; other keys are
// ignored for forward compatibility, and a null member counts as absent
// (§4.6). Errors:
//   - unknown field, operator not allowed for the field type, missing or
//     mistyped value: -32602, data.field "filter.<name>";
//   - operator not in ops: -32005, data.option "<op>";
//   - malformed clause, empty and/or, depth > MaxFilterDepth, more than
//     MaxFilterNodes clauses: -32602, data.field "filter".
func ValidateFilter(raw json.RawMessage, fields map[string]FieldType, ops []Op) (Filter, *rcp.Error) {
	tree, err := decodeFilter(raw)
	if err != nil || tree == nil {
		return nil, err
	}
	if m, ok := tree.(map[string]any); ok && len(m) == 0 {
		return nil, nil
	}
	v := &validator{fields: fields, ops: ops}
	return v.clause(tree, 1)
}

// decodeFilter decodes raw with numbers kept as json.Number; nil for null.
func decodeFilter(raw json.RawMessage) (any, *rcp.Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, rcp.InvalidParams(filterRoot, "filter is not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, rcp.InvalidParams(filterRoot, "trailing data after filter")
	}
	return tree, nil
}

// validator carries the advertised surface and the running node count.
type validator struct {
	fields map[string]FieldType
	ops    []Op
	nodes  int
}

// clause validates one clause at the given depth (root = 1).
func (v *validator) clause(node any, depth int) (Filter, *rcp.Error) {
	if depth > MaxFilterDepth {
		return nil, rcp.InvalidParams(filterRoot, "filter nests deeper than %d", MaxFilterDepth)
	}
	if v.nodes++; v.nodes > MaxFilterNodes {
		return nil, rcp.InvalidParams(filterRoot, "filter has more than %d clauses", MaxFilterNodes)
	}
	m, ok := node.(map[string]any)
	if !ok {
		return nil, rcp.InvalidParams(filterRoot, "filter clause must be an object")
	}
	kind, err := clauseKind(m)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "and", "or":
		return v.combine(kind, m[kind], depth)
	case "not":
		return v.negate(m["not"], depth)
	}
	return v.leaf(m)
}

// clauseKind names the clause: "and", "or", "not" or "" for a leaf. A
// clause with none, or with more than one, is -32602 "filter".
func clauseKind(m map[string]any) (string, *rcp.Error) {
	kind, n := "", 0
	for _, k := range [...]string{"and", "or", "not"} {
		if m[k] != nil {
			kind, n = k, n+1
		}
	}
	if m["field"] != nil || m["op"] != nil {
		n++
	}
	switch {
	case n == 0:
		return "", rcp.InvalidParams(filterRoot, "filter clause needs one of and, or, not, or field+op")
	case n > 1:
		return "", rcp.InvalidParams(filterRoot, "filter clause mixes and, or, not and field+op")
	}
	return kind, nil
}

// combine validates a non-empty and/or child list.
func (v *validator) combine(kind string, raw any, depth int) (Filter, *rcp.Error) {
	list, ok := raw.([]any)
	if !ok || len(list) == 0 {
		return nil, rcp.InvalidParams(filterRoot, "%q must be a non-empty array of clauses", kind)
	}
	children := make([]Filter, 0, len(list))
	for _, c := range list {
		f, err := v.clause(c, depth+1)
		if err != nil {
			return nil, err
		}
		children = append(children, f)
	}
	if kind == "and" {
		return &And{Children: children}, nil
	}
	return &Or{Children: children}, nil
}

// negate validates the single child of a not clause.
func (v *validator) negate(raw any, depth int) (Filter, *rcp.Error) {
	child, err := v.clause(raw, depth+1)
	if err != nil {
		return nil, err
	}
	return &Not{Child: child}, nil
}

// leaf validates a field+op(+value) condition. The field is checked before
// the operator, and the advertised set before the type table (§8, §12).
func (v *validator) leaf(m map[string]any) (Filter, *rcp.Error) {
	name, ok := m["field"].(string)
	if !ok || name == "" {
		return nil, rcp.InvalidParams(filterRoot, "filter field must be a non-empty string")
	}
	path := filterRoot + "." + name
	t, known := v.fields[name]
	if !known {
		return nil, rcp.InvalidParams(path, "filter field %q is not advertised", name)
	}
	opName, ok := m["op"].(string)
	if !ok || opName == "" {
		return nil, rcp.InvalidParams(path, "filter op must be a non-empty string")
	}
	op := Op(opName)
	if !slices.Contains(v.ops, op) {
		return nil, rcp.OptionUnsupported(opName, "filter operator %q is not advertised", opName)
	}
	if !opAllowed(t, op) {
		return nil, rcp.InvalidParams(path, "operator %q does not apply to %s field %q", op, t, name)
	}
	val, msg := normaliseValue(t, op, m["value"])
	if msg != "" {
		return nil, rcp.InvalidParams(path, "filter %q %s: %s", name, op, msg)
	}
	return &Cond{Field: name, Type: t, Op: op, Value: val}, nil
}
