package mcpserver

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// DefaultMaxSchemaFields is how many filter fields a search tool's input
// schema enumerates by default.
const DefaultMaxSchemaFields = 48

// fieldPlan is what a search tool's filter schema enumerates: the fields
// it names (sorted), and how many advertised fields it leaves out.
type fieldPlan struct {
	named   []string
	omitted int
}

// planFields chooses the filter fields a schema enumerates: all of them
// when they fit in max, else the first max in name order. The operator
// chooses which fields are advertised at all with policy.fields; every
// advertised field stays usable whether or not it is enumerated.
func planFields(f *rcp.FilterCap, max int) fieldPlan {
	if f == nil || len(f.Fields) == 0 {
		return fieldPlan{}
	}
	names := make([]string, 0, len(f.Fields))
	for n := range f.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	if max > 0 && len(names) > max {
		return fieldPlan{named: names[:max], omitted: len(names) - max}
	}
	return fieldPlan{named: names}
}

// opKind groups operators by the value they take.
type opKind int

const (
	kindScalar opKind = iota // eq, ne, gt, gte, lt, lte, contains
	kindSet                  // in, nin
	kindExists               // exists
)

func kindOf(op filterlang.Op) opKind {
	switch op {
	case filterlang.OpIn, filterlang.OpNin:
		return kindSet
	case filterlang.OpExists:
		return kindExists
	}
	return kindScalar
}

// servedOps returns the operators field serves: the advertised ones (per
// field when the capability says so) that the §8 table allows on its type,
// in filterlang.AllOps order.
func servedOps(f *rcp.FilterCap, field string) []filterlang.Op {
	t := filterlang.FieldType(f.Fields[field])
	adv := f.OpsOf(field)
	var out []filterlang.Op
	for _, op := range filterlang.AllowedOps(t) {
		if slices.Contains(adv, string(op)) {
			out = append(out, op)
		}
	}
	return out
}

// scalarSchema is the JSON Schema of one value of a field of type t.
func scalarSchema(t filterlang.FieldType) map[string]any {
	switch t {
	case filterlang.TypeInt:
		return map[string]any{"type": "integer", "minimum": -(1 << 53), "maximum": 1 << 53}
	case filterlang.TypeFloat:
		return map[string]any{"type": "number"}
	case filterlang.TypeBool:
		return map[string]any{"type": "boolean"}
	case filterlang.TypeDate:
		return map[string]any{"anyOf": []any{
			map[string]any{"type": "string", "description": "RFC 3339 date-time or YYYY-MM-DD"},
			map[string]any{"type": "integer", "description": "epoch milliseconds"},
		}}
	}
	return map[string]any{"type": "string"}
}

// valueSchema is the JSON Schema of the value an operator of kind k takes
// on a field of type t.
func valueSchema(t filterlang.FieldType, k opKind) map[string]any {
	switch k {
	case kindSet:
		return map[string]any{"type": "array", "minItems": 1, "maxItems": filterlang.MaxFilterSetSize, "items": scalarSchema(t)}
	case kindExists:
		return map[string]any{"type": "boolean", "default": true}
	}
	return scalarSchema(t)
}

// leafGroup is one filter leaf shape: fields of one type that serve the
// same operators of one kind.
type leafGroup struct {
	t      filterlang.FieldType
	k      opKind
	ops    []string
	fields []string
}

func (g *leafGroup) key() string {
	return fmt.Sprintf("%s|%d|%s", g.t, g.k, strings.Join(g.ops, ","))
}

// leafGroups groups the enumerated fields into leaf shapes, in a stable
// order.
func leafGroups(f *rcp.FilterCap, named []string) []*leafGroup {
	byKey := map[string]*leafGroup{}
	var order []*leafGroup
	for _, field := range named {
		t := filterlang.FieldType(f.Fields[field])
		perKind := map[opKind][]string{}
		for _, op := range servedOps(f, field) {
			perKind[kindOf(op)] = append(perKind[kindOf(op)], string(op))
		}
		for _, k := range []opKind{kindScalar, kindSet, kindExists} {
			if len(perKind[k]) == 0 {
				continue
			}
			g := &leafGroup{t: t, k: k, ops: perKind[k]}
			if have, ok := byKey[g.key()]; ok {
				have.fields = append(have.fields, field)
				continue
			}
			g.fields = []string{field}
			byKey[g.key()] = g
			order = append(order, g)
		}
	}
	return order
}

// filterSchema returns the $defs of the §8 filter language restricted to
// what the capability advertises: one leaf shape per group of enumerated
// fields (so a model can only form a leaf the engine serves exactly), a
// generic leaf for the advertised fields the schema does not enumerate,
// and and/or/not over them. nil when no field is filterable.
func filterSchema(f *rcp.FilterCap, plan fieldPlan) map[string]any {
	if len(plan.named) == 0 {
		return nil
	}
	var alts []any
	for _, g := range leafGroups(f, plan.named) {
		leaf := map[string]any{
			"type": "object",
			"properties": map[string]any{
				"field": map[string]any{"type": "string", "enum": g.fields},
				"op":    map[string]any{"type": "string", "enum": g.ops},
				"value": valueSchema(g.t, g.k),
			},
			"required":             required(g.k),
			"additionalProperties": false,
		}
		if d := precisionNote(f, g.fields); d != "" {
			leaf["description"] = d
		}
		alts = append(alts, leaf)
	}
	if plan.omitted > 0 {
		alts = append(alts, map[string]any{
			"type":        "object",
			"description": fmt.Sprintf("A condition on one of the %d filterable fields not listed above (see the probe resource for their types and operators).", plan.omitted),
			"properties": map[string]any{
				"field": map[string]any{"type": "string", "not": map[string]any{"enum": plan.named}},
				"op":    map[string]any{"type": "string", "enum": advertisedOps(f)},
				"value": anyValue(),
			},
			"required":             []string{"field", "op"},
			"additionalProperties": false,
		})
	}
	ref := map[string]any{"$ref": "#/$defs/filter"}
	list := map[string]any{"type": "array", "minItems": 1, "items": ref}
	alts = append(alts,
		map[string]any{"type": "object", "properties": map[string]any{"and": list}, "required": []string{"and"}, "additionalProperties": false},
		map[string]any{"type": "object", "properties": map[string]any{"or": list}, "required": []string{"or"}, "additionalProperties": false},
		map[string]any{"type": "object", "properties": map[string]any{"not": ref}, "required": []string{"not"}, "additionalProperties": false},
	)
	return map[string]any{"filter": map[string]any{"anyOf": alts}}
}

// precisionNote says how fields store float values, "" when none of
// them declares a precision: a value is compared once rounded to its
// field's precision.
func precisionNote(f *rcp.FilterCap, fields []string) string {
	var parts []string
	rounds := false
	for _, n := range fields {
		if p, ok := f.FieldPrecision[n]; ok {
			parts = append(parts, n+" as "+p.String())
			rounds = rounds || p.Rounds()
		}
	}
	if len(parts) == 0 {
		return ""
	}
	d := "Stored precision: " + strings.Join(parts, ", ") + ". -0.0 equals 0."
	if rounds {
		d += " A value is compared once rounded to its field's precision, so values that round alike are equal."
	}
	return d
}

// anyValue is the value of a leaf on a field the schema does not
// enumerate: any scalar, or a list of them for in and nin, each branch
// with one type so that single-type schema dialects take it.
func anyValue() map[string]any {
	scalars := []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}, map[string]any{"type": "boolean"}}
	return map[string]any{"anyOf": append(scalars, map[string]any{"type": "array", "items": map[string]any{"anyOf": scalars}})}
}

// required lists a leaf's required members: exists may omit its value.
func required(k opKind) []string {
	if k == kindExists {
		return []string{"field", "op"}
	}
	return []string{"field", "op", "value"}
}

// advertisedOps is every operator some field serves, in AllOps order.
func advertisedOps(f *rcp.FilterCap) []string {
	var out []string
	for _, op := range filterlang.AllOps {
		for field := range f.Fields {
			if slices.Contains(servedOps(f, field), op) {
				out = append(out, string(op))
				break
			}
		}
	}
	return out
}

// searchSchema is the input schema of a search tool over caps.
func searchSchema(caps rcp.Capabilities, plan fieldPlan, tokenBudget int, maxQueryChars int) map[string]any {
	props := map[string]any{
		"query": map[string]any{"type": "string", "description": "What to search for, in natural language or keywords."},
	}
	if maxQueryChars > 0 {
		props["query"].(map[string]any)["maxLength"] = maxQueryChars
	}
	rc := caps.Retrieve
	k := map[string]any{"type": "integer", "minimum": 1, "default": defaultK, "description": "How many hits to return."}
	if rc != nil && rc.MaxK > 0 {
		k["maximum"] = rc.MaxK
		k["default"] = min(defaultK, rc.MaxK)
	}
	props["k"] = k
	if rc != nil && len(rc.Modes) > 0 {
		modes := make([]string, len(rc.Modes))
		for i, m := range rc.Modes {
			modes[i] = string(m)
		}
		m := map[string]any{"type": "string", "enum": modes, "description": modeDescription(rc.Modes)}
		if rc.DefaultMode != "" {
			m["default"] = string(rc.DefaultMode)
		}
		props["mode"] = m
	}
	schema := map[string]any{"type": "object", "required": []string{"query"}, "additionalProperties": false}
	if defs := filterSchema(caps.Filter, plan); defs != nil {
		props["filter"] = map[string]any{"type": "object", "$ref": "#/$defs/filter", "description": "Only return documents matching this condition tree: a leaf {field, op, value}, or {and:[...]}, {or:[...]}, {not:{...}}."}
		schema["$defs"] = defs
	}
	if caps.Pagination != nil {
		props["cursor"] = map[string]any{"type": "string", "description": "nextCursor of a previous result, to get the next page; repeat the same query, mode, k and filter with it."}
	}
	if rc != nil && rc.TokenBudget {
		tb := map[string]any{"type": "integer", "minimum": 1, "description": "Most tokens of hit text to return; lower-ranked hits are dropped or cut to fit."}
		if tokenBudget > 0 {
			tb["default"] = tokenBudget
		}
		props["tokenBudget"] = tb
	}
	if caps.Session != nil && caps.Session.Dedup {
		props["sessionId"] = map[string]any{"type": "string", "minLength": 1, "maxLength": 256,
			"description": "Any id you choose for this task: hits already returned under it are not returned again (until it expires), so repeated searches bring new documents."}
	}
	schema["properties"] = props
	return schema
}

func modeDescription(modes []rcp.Mode) string {
	var parts []string
	for _, m := range modes {
		switch m {
		case rcp.ModeSparse:
			parts = append(parts, "sparse = keyword match (BM25): best for exact terms, names, ids")
		case rcp.ModeDense:
			parts = append(parts, "dense = semantic similarity of embeddings: best for paraphrases and questions")
		case rcp.ModeHybrid:
			parts = append(parts, "hybrid = both, fused")
		default:
			parts = append(parts, string(m))
		}
	}
	return "Retrieval mode: " + strings.Join(parts, "; ") + "."
}

// indexAddSchema is the input schema of an index_add tool.
func indexAddSchema(maxDocs int) map[string]any {
	docs := map[string]any{
		"type": "array", "minItems": 1,
		"items": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"id":   map[string]any{"type": "string", "description": "Document id; an existing document with this id is replaced. Omitted: the server assigns one."},
				"text": map[string]any{"type": "string", "minLength": 1},
				"meta": map[string]any{"type": "object", "description": "Metadata fields, filterable where the index maps them."},
			},
			"required":             []string{"text"},
			"additionalProperties": false,
		},
	}
	if maxDocs > 0 {
		docs["maxItems"] = maxDocs
	}
	return map[string]any{"type": "object", "properties": map[string]any{"documents": docs},
		"required": []string{"documents"}, "additionalProperties": false}
}

// indexDeleteSchema is the input schema of an index_delete tool.
func indexDeleteSchema(maxIDs int) map[string]any {
	ids := map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "string", "minLength": 1}}
	if maxIDs > 0 {
		ids["maxItems"] = maxIDs
	}
	return map[string]any{"type": "object", "properties": map[string]any{"ids": ids},
		"required": []string{"ids"}, "additionalProperties": false}
}

// portable rewrites a schema (in place) for clients whose schema dialect
// allows one type per schema (function declarations of several model
// APIs): a list of types becomes an anyOf with one branch per type, and
// an enum of strings gets type string. It returns s.
func portable(s map[string]any) map[string]any {
	if ts, ok := s["type"].([]any); ok {
		alts := make([]any, len(ts))
		for i, t := range ts {
			alts[i] = map[string]any{"type": t}
		}
		delete(s, "type")
		s["anyOf"] = alts
	}
	if e, ok := s["enum"].([]any); ok && s["type"] == nil && len(e) > 0 {
		strs := true
		for _, v := range e {
			_, isStr := v.(string)
			strs = strs && isStr
		}
		if strs {
			s["type"] = "string"
		}
	}
	for _, v := range s {
		switch v := v.(type) {
		case map[string]any:
			portable(v)
		case []any:
			for _, x := range v {
				if m, ok := x.(map[string]any); ok {
					portable(m)
				}
			}
		}
	}
	return s
}
