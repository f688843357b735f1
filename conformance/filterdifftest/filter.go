package filterdifftest

import (
	"encoding/json"
	"slices"
)

// Node is one clause of a §8 filter tree: exactly one of And, Or, Not, or
// a leaf (Field, Op, Value).
type Node struct {
	And, Or []*Node
	Not     *Node
	Field   string
	Op      string
	// Value is a string, json.Number or bool, or a []any of them for in
	// and nin; numbers keep the exact text the suite chose.
	Value any
}

// Leaf returns the leaf {field, op, value}.
func Leaf(field, op string, value any) *Node { return &Node{Field: field, Op: op, Value: value} }

// IsLeaf reports whether n is a field condition.
func (n *Node) IsLeaf() bool { return n.And == nil && n.Or == nil && n.Not == nil }

// MarshalJSON renders the §8 wire form.
func (n *Node) MarshalJSON() ([]byte, error) {
	switch {
	case n.And != nil:
		return json.Marshal(map[string]any{"and": n.And})
	case n.Or != nil:
		return json.Marshal(map[string]any{"or": n.Or})
	case n.Not != nil:
		return json.Marshal(map[string]any{"not": n.Not})
	}
	return json.Marshal(struct {
		Field string `json:"field"`
		Op    string `json:"op"`
		Value any    `json:"value"`
	}{n.Field, n.Op, n.Value})
}

// String is the JSON form.
func (n *Node) String() string {
	b, err := json.Marshal(n)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// Leaves returns the leaves of n in order.
func (n *Node) Leaves() []*Node {
	if n.IsLeaf() {
		return []*Node{n}
	}
	var out []*Node
	for _, c := range n.children() {
		out = append(out, c.Leaves()...)
	}
	return out
}

func (n *Node) children() []*Node {
	switch {
	case n.And != nil:
		return n.And
	case n.Or != nil:
		return n.Or
	case n.Not != nil:
		return []*Node{n.Not}
	}
	return nil
}

// fields returns the distinct field names of n's leaves, sorted.
func (n *Node) fields() []string {
	var out []string
	for _, l := range n.Leaves() {
		if !slices.Contains(out, l.Field) {
			out = append(out, l.Field)
		}
	}
	slices.Sort(out)
	return out
}

// values returns a leaf's value as a list: the members of in/nin, else the
// single value.
func (n *Node) values() []any {
	if list, ok := n.Value.([]any); ok {
		return list
	}
	return []any{n.Value}
}
