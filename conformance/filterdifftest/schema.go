package filterdifftest

import "encoding/json"

// Class is how the oracle reads a field's values; its name is the §8
// filter type the field should be advertised with.
type Class string

// The §8 filter types the suite generates fields for.
const (
	ClassKeyword Class = "keyword"
	ClassText    Class = "text"
	ClassInt     Class = "int"
	ClassFloat   Class = "float"
	ClassDate    Class = "date"
	ClassBool    Class = "bool"
)

// Field is one field of a generated index as the oracle sees it: where its
// values live in the source and how the engine stores them.
type Field struct {
	// Name is the RCP filter field name (the dotted mapping path).
	Name string
	// Kind names the entry of the kind table that made the field.
	Kind string
	// Class is its §8 type.
	Class Class
	// Mapping is the field's mapping as sent (a property, or a runtime or
	// derived field definition), for failure reports.
	Mapping any
	// Sources are the source paths whose values the field holds: its own
	// path, a copy_to source, an alias's target.
	Sources []string
	// Leaves makes an object value contribute every scalar under it, as
	// a flattened (flat_object) field indexes it.
	Leaves bool
	// IntType is the integer type (long, integer, short, byte,
	// unsigned_long) of an int field.
	IntType string
	// Prec is the precision (PrecDouble, ...) of a float field and Scale
	// the scaling_factor of a scaled_float.
	Prec  string
	Scale float64
	// Coerce: numeric strings in the source count as numbers.
	Coerce bool
	// Nanos marks date_nanos (else a date field stores milliseconds);
	// EpochSeconds a date field whose format is epoch_second.
	Nanos, EpochSeconds bool
	// IgnoreAbove is the ignore_above of a keyword field, or of the exact
	// keyword sub-field of a text field (0: none). A normalizer needs no
	// field here: it does not change what §8 selects, only what the engine
	// would.
	IgnoreAbove int
	// NullValue is the mapping's null_value (nil: none).
	NullValue any
	// Core fields take part in the coverage guard: they must be
	// advertised with every operator §8 allows for their type.
	Core bool

	// pool holds the source values documents draw from.
	pool []any
}

// Index is one generated index.
type Index struct {
	Name string
	// Body is the create-index request: settings and mappings.
	Body map[string]any
	// Fields are the index's fields by RCP name.
	Fields map[string]*Field
}

// Doc is one generated document.
type Doc struct {
	ID string
	// Index is the position in Round.Indices of the index holding it.
	Index  int
	Source map[string]any
	// vals are the typed elements of each field (see Elements).
	vals map[string][]any
}

// Round is one generated target: one index, or an alias over several.
type Round struct {
	// Target is what the adapter opens: the index, or the alias.
	Target  string
	Alias   bool
	Indices []*Index
	Docs    []*Doc
	// Names are leaf field names that are no field of any index (object
	// roots, sub-fields, unknown names); they must never be advertised.
	Names []string
}

// specs returns the field named name in every index that has it.
func (r *Round) specs(name string) []*Field {
	var out []*Field
	for _, ix := range r.Indices {
		if f := ix.Fields[name]; f != nil {
			out = append(out, f)
		}
	}
	return out
}

// fieldNames returns every field name of the round, sorted.
func (r *Round) fieldNames() []string {
	seen := map[string]bool{}
	for _, ix := range r.Indices {
		for n := range ix.Fields {
			seen[n] = true
		}
	}
	return sortedKeys(seen)
}

// mappingJSON renders the mappings of the field named name in each index.
func (r *Round) mappingJSON(name string) string {
	out := ""
	for _, ix := range r.Indices {
		f := ix.Fields[name]
		if f == nil {
			continue
		}
		b, _ := json.Marshal(f.Mapping)
		if out != "" {
			out += " | "
		}
		if len(r.Indices) > 1 {
			out += ix.Name + ": "
		}
		out += string(b)
	}
	if out == "" {
		return "(no such field)"
	}
	return out
}
