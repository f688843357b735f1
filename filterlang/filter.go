// Package filterlang is the §8 filter language: the sealed filter AST,
// its validator, its evaluator over document metadata, the canonical
// metadata path helpers the evaluator reads through, and Walk, the one
// traversal every filter walk uses. No I/O, no context.
package filterlang

// FieldType is a §8 filter field type.
type FieldType string

// Filter field types (§8).
const (
	TypeKeyword FieldType = "keyword"
	TypeText    FieldType = "text"
	TypeInt     FieldType = "int"
	TypeFloat   FieldType = "float"
	TypeBool    FieldType = "bool"
	TypeDate    FieldType = "date"
	TypeGeo     FieldType = "geo"
)

// Op is a §8 filter operator.
type Op string

// Filter operators (§8).
const (
	OpEq       Op = "eq"
	OpNe       Op = "ne"
	OpGt       Op = "gt"
	OpGte      Op = "gte"
	OpLt       Op = "lt"
	OpLte      Op = "lte"
	OpIn       Op = "in"
	OpNin      Op = "nin"
	OpContains Op = "contains"
	OpExists   Op = "exists"
)

// AllOps lists every §8 operator in a stable order.
var AllOps = []Op{OpEq, OpNe, OpGt, OpGte, OpLt, OpLte, OpIn, OpNin, OpContains, OpExists}

// Filter is a validated, normalised filter tree: exactly one of *And, *Or,
// *Not or *Cond. Adapters switch on the concrete type; the set is sealed.
type Filter interface{ isFilter() }

// And matches when every child matches. It has at least one child.
type And struct{ Children []Filter }

// Or matches when any child matches. It has at least one child.
type Or struct{ Children []Filter }

// Not matches when its child does not.
type Not struct{ Child Filter }

// Cond is one leaf condition on an advertised field, with a value already
// checked against the field type and normalised:
//   - keyword/text: string
//   - int: int64
//   - float: float64
//   - bool: bool
//   - date: time.Time (UTC; RFC 3339 strings and epoch-ms are both accepted)
//   - in/nin: []any of the element type above
//   - exists: bool
type Cond struct {
	Field string
	Type  FieldType
	Op    Op
	Value any
}

func (*And) isFilter()  {}
func (*Or) isFilter()   {}
func (*Not) isFilter()  {}
func (*Cond) isFilter() {}
