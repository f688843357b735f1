package dslfilter

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Options are the engine facts the filter analysis depends on.
type Options struct {
	// IgnoredField: the engine lists in the _ignored metadata field every
	// field whose value it dropped for ignore_above or ignore_malformed
	// (Elasticsearch does; OpenSearch does not), so exists can still see
	// such values.
	IgnoredField bool
}

// Fields is the filter view of the mappings behind one target: the fields
// offered with the operators each serves exactly, how every offered field
// translates, and why anything was left out.
type Fields struct {
	// Filter lists the offered fields in name order. A field's Ops is nil
	// when it serves every operator §8 allows for its type.
	Filter []capability.FilterField
	// Plan is the translation of each offered field.
	Plan map[string]Field
	// Notes say, per field, why a field or an operator is not offered.
	Notes []string
}

// prop is one node of a _mapping properties tree: the parameters that
// decide filter semantics.
type prop struct {
	Type            string          `json:"type"`
	Index           *bool           `json:"index"`
	Enabled         *bool           `json:"enabled"`
	IgnoreAbove     *int            `json:"ignore_above"`
	Normalizer      string          `json:"normalizer"`
	NullValue       json.RawMessage `json:"null_value"`
	ScalingFactor   float64         `json:"scaling_factor"`
	Format          string          `json:"format"`
	CopyTo          json.RawMessage `json:"copy_to"`
	Script          json.RawMessage `json:"script"`
	IgnoreMalformed *bool           `json:"ignore_malformed"`
	Path            string          `json:"path"`
	Properties      map[string]prop `json:"properties"`
	Fields          map[string]prop `json:"fields"`
}

// indexMapping is one index's entry in a GET /<target>/_mapping body.
type indexMapping struct {
	Mappings struct {
		Properties map[string]prop            `json:"properties"`
		Runtime    map[string]json.RawMessage `json:"runtime"`
	} `json:"mappings"`
}

// verdict is the analysis of one field in one index.
type verdict struct {
	ff    capability.FilterField
	plan  Field
	notes []string // operators left out
	// refused is why the whole field is not offered ("" when offered).
	refused string
}

// Analyze reads a GET /<target>/_mapping body (one or more indices) and
// decides, field by field, which §8 operators the engine answers exactly
// (docs/retrieval.md "Filters"). A field whose indices disagree on anything that
// changes its semantics is not offered.
func Analyze(raw []byte, opt Options) (*Fields, error) {
	var byIndex map[string]indexMapping
	if err := json.Unmarshal(raw, &byIndex); err != nil {
		return nil, fmt.Errorf("decode mapping: %w", err)
	}
	per := map[string]map[string]verdict{}
	var notes []string
	for _, idx := range sortedKeys(byIndex) {
		m := byIndex[idx].Mappings
		targets := map[string]bool{}
		collectCopyTo("", m.Properties, targets)
		vs := map[string]verdict{}
		walk("", m.Properties, targets, opt, vs, &notes)
		for _, name := range sortedKeys(m.Runtime) {
			vs[name] = verdict{refused: "runtime field: its values are computed by a script, not read from the document"}
		}
		per[idx] = vs
	}
	return merge(per, notes), nil
}

// merge keeps a field when every index that maps it gives the same
// verdict; otherwise the field is named in a conflict note.
func merge(per map[string]map[string]verdict, notes []string) *Fields {
	out := &Fields{Plan: map[string]Field{}}
	byField := map[string]map[string][]string{} // field → verdict key → indices
	first := map[string]verdict{}
	for _, idx := range sortedKeys(per) {
		for name, v := range per[idx] {
			key := fmt.Sprintf("%#v", v)
			if byField[name] == nil {
				byField[name] = map[string][]string{}
				first[name] = v
			}
			byField[name][key] = append(byField[name][key], idx)
		}
	}
	for _, name := range sortedKeys(byField) {
		if len(byField[name]) > 1 {
			var parts []string
			for _, k := range sortedKeys(byField[name]) {
				parts = append(parts, "["+strings.Join(byField[name][k], ",")+"]")
			}
			out.Notes = append(out.Notes, fmt.Sprintf("filter field %s: not offered: indices %s map it differently", name, strings.Join(parts, " vs ")))
			continue
		}
		v := first[name]
		if v.refused != "" {
			out.Notes = append(out.Notes, fmt.Sprintf("filter field %s: not offered: %s", name, v.refused))
			continue
		}
		out.Filter = append(out.Filter, v.ff)
		out.Plan[name] = v.plan
		out.Notes = append(out.Notes, v.notes...)
	}
	out.Notes = append(slices.Compact(notes), out.Notes...)
	return out
}

// collectCopyTo records every field named as a copy_to target.
func collectCopyTo(prefix string, props map[string]prop, out map[string]bool) {
	for name, p := range props {
		for _, t := range stringList(p.CopyTo) {
			out[t] = true
		}
		for _, sub := range p.Fields {
			for _, t := range stringList(sub.CopyTo) {
				out[t] = true
			}
		}
		collectCopyTo(prefix+name+".", p.Properties, out)
	}
}

// stringList decodes a string or an array of strings.
func stringList(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}

// walk analyses every leaf below props.
func walk(prefix string, props map[string]prop, copyTargets map[string]bool, opt Options, out map[string]verdict, notes *[]string) {
	for _, name := range sortedKeys(props) {
		p, path := props[name], prefix+name
		switch {
		case p.Type == "nested":
			*notes = append(*notes, fmt.Sprintf("filter field %s: not offered: nested objects need nested queries", path))
		case p.Type == "" || p.Type == "object":
			if p.Enabled != nil && !*p.Enabled {
				*notes = append(*notes, fmt.Sprintf("filter field %s: not offered: object with enabled: false is not indexed", path))
				continue
			}
			walk(path+".", p.Properties, copyTargets, opt, out, notes)
		default:
			if v, ok := analyse(path, p, copyTargets[path], opt); ok {
				out[path] = v
			}
		}
	}
}

// Why a field cannot be offered, for types a user may expect to filter on.
var unfilterable = map[string]string{
	"alias":            "field alias: filter on the field it points to, whose name the documents carry",
	"flattened":        "flattened fields are not offered",
	"flat_object":      "flat_object fields are not offered",
	"constant_keyword": "constant_keyword: every document matches the mapped value whether or not its source has it",
	"ip":               "ip fields compare addresses, not strings",
	"version":          "version fields compare by version order, not as strings",
}

// analyse decides one leaf; ok is false for types that are not filter
// material at all (vectors, ranges, binary, …).
func analyse(path string, p prop, copyTarget bool, opt Options) (verdict, bool) {
	if why, ok := unfilterable[p.Type]; ok {
		return verdict{refused: why}, true
	}
	t := filterType(p.Type)
	if t == "" {
		return verdict{}, false
	}
	v := verdict{ff: capability.FilterField{Name: path, Type: t}, plan: Field{Name: path}}
	switch {
	case p.Type == "unsigned_long":
		// OpenSearch 3.5 answers from doc values without the small values
		// of a document that also holds values of 2^63 or more; on
		// Elasticsearch the type is a licensed plugin not proven here.
		v.refused = "unsigned_long filters are not proven exact (OpenSearch misses values of multi-valued fields when it answers from doc values)"
	case copyTarget:
		v.refused = "receives copy_to values that are not in the document's own source"
	case p.Index != nil && !*p.Index:
		v.refused = "index: false"
	case len(p.Script) > 0:
		v.refused = "its values are computed by a script, not read from the document"
	case t == filterlang.TypeText:
		v.text(p)
	default:
		v.exact(p, opt)
	}
	return v, true
}

// text offers a text field through its exact keyword sub-field: eq and in
// on the whole value, contains as a case-sensitive substring.
func (v *verdict) text(p prop) {
	sub, sp, why := exactSub(p)
	if sub == "" {
		v.refused = why
		return
	}
	v.plan.Name, v.plan.Exists = v.ff.Name+"."+sub, v.ff.Name
	if sp.IgnoreAbove != nil {
		v.plan.IgnoreAbove = *sp.IgnoreAbove
		v.drop(fmt.Sprintf("%s.%s has ignore_above %d: a substring of a longer value cannot be found", v.ff.Name, sub, *sp.IgnoreAbove), filterlang.OpContains)
	}
}

// exactSub picks the keyword sub-field that holds a text field's values
// unchanged: indexed, no normalizer, no null_value, preferring no
// ignore_above, then the largest.
func exactSub(p prop) (string, prop, string) {
	best, why := "", "no keyword sub-field holds its exact value"
	for _, name := range sortedKeys(p.Fields) {
		sp := p.Fields[name]
		switch {
		case sp.Type != "keyword":
			continue
		case sp.Index != nil && !*sp.Index:
			why = fmt.Sprintf("keyword sub-field %s has index: false", name)
			continue
		case sp.Normalizer != "":
			why = fmt.Sprintf("keyword sub-field %s has normalizer %s: the engine compares normalised values", name, sp.Normalizer)
			continue
		case len(sp.NullValue) > 0 && string(sp.NullValue) != "null":
			why = fmt.Sprintf("keyword sub-field %s has a null_value", name)
			continue
		}
		if best == "" || limit(sp) > limit(p.Fields[best]) {
			best = name
		}
	}
	if best == "" {
		return "", prop{}, why
	}
	return best, p.Fields[best], ""
}

// limit is a keyword's ignore_above, unlimited when unset.
func limit(p prop) int {
	if p.IgnoreAbove == nil {
		return math.MaxInt
	}
	return *p.IgnoreAbove
}

// exact decides a keyword, numeric, date or boolean field.
func (v *verdict) exact(p prop, opt Options) {
	if p.Normalizer != "" {
		v.refused = fmt.Sprintf("normalizer %s: the engine compares normalised values, RCP compares exact strings", p.Normalizer)
		return
	}
	switch p.Type {
	case "wildcard":
		v.plan.NoEmpty = true
	case "date":
		v.plan.Millis = true
	case "date_nanos":
		v.plan.Nanos = true
	case "double":
		v.ff.Precision = rcp.FieldPrecision{Stored: rcp.PrecisionDouble}
	case "float":
		v.plan.Precision = Float32
		v.ff.Precision = rcp.FieldPrecision{Stored: rcp.PrecisionFloat}
	case "half_float":
		v.plan.Precision = Half
		v.ff.Precision = rcp.FieldPrecision{Stored: rcp.PrecisionHalfFloat}
	case "scaled_float":
		if p.ScalingFactor <= 0 || math.IsInf(p.ScalingFactor, 0) {
			v.refused = "scaled_float without a usable scaling_factor"
			return
		}
		v.plan.Precision, v.plan.Scale = Scaled, p.ScalingFactor
		v.ff.Precision = rcp.FieldPrecision{Stored: rcp.PrecisionScaledFloat, ScalingFactor: p.ScalingFactor}
	case "integer", "short", "byte":
		v.plan.Ints = intRanges[p.Type]
	}
	// Values the engine drops are invisible to exists unless _ignored
	// records them.
	dropped := ""
	if p.IgnoreAbove != nil {
		v.plan.IgnoreAbove = *p.IgnoreAbove
		dropped = fmt.Sprintf("ignore_above %d: values longer than %d characters are not indexed", *p.IgnoreAbove, *p.IgnoreAbove)
	}
	if p.IgnoreMalformed != nil && *p.IgnoreMalformed {
		dropped = "ignore_malformed: malformed values are not indexed"
	}
	if dropped != "" {
		if opt.IgnoredField {
			v.plan.Ignored = true
		} else {
			v.drop(fmt.Sprintf("%s and the engine does not record them", dropped), filterlang.OpExists)
		}
	}
	if len(p.NullValue) > 0 && string(p.NullValue) != "null" {
		nv, err := nullValue(v.ff.Type, p, v.plan)
		if err != nil {
			v.refused = fmt.Sprintf("null_value %s: %v", p.NullValue, err)
			return
		}
		v.plan.NullValue = nv
		v.drop(fmt.Sprintf("null_value %s: the engine indexes it for null, so a null cannot be told from it", p.NullValue), filterlang.OpExists)
	}
}

// drop removes ops from the field's operators, with the reason.
func (v *verdict) drop(why string, ops ...filterlang.Op) {
	if v.ff.Ops == nil {
		v.ff.Ops = filterlang.AllowedOps(v.ff.Type)
	}
	var names []string
	for _, op := range ops {
		if i := slices.Index(v.ff.Ops, op); i >= 0 {
			v.ff.Ops = slices.Delete(slices.Clone(v.ff.Ops), i, i+1)
			names = append(names, string(op))
		}
	}
	if len(names) > 0 {
		v.notes = append(v.notes, fmt.Sprintf("filter field %s: %s not offered: %s", v.ff.Name, strings.Join(names, ","), why))
	}
}

// intRanges are the value ranges of the narrow integer types; a value
// outside one is answered without asking the engine, which rejects it.
var intRanges = map[string]IntRange{
	"integer": {math.MinInt32, math.MaxInt32},
	"short":   {math.MinInt16, math.MaxInt16},
	"byte":    {math.MinInt8, math.MaxInt8},
}

// nullValue reads a mapping's null_value as a filter value of type t,
// at the precision the field stores.
func nullValue(t filterlang.FieldType, p prop, f Field) (any, error) {
	var raw any
	d := json.NewDecoder(strings.NewReader(string(p.NullValue)))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, err
	}
	switch t {
	case filterlang.TypeKeyword:
		if s, ok := raw.(string); ok {
			return s, nil
		}
	case filterlang.TypeBool:
		switch raw {
		case true, "true":
			return true, nil
		case false, "false":
			return false, nil
		}
	case filterlang.TypeInt:
		if n, ok := number(raw); ok {
			if i, err := strconv.ParseInt(n, 10, 64); err == nil {
				return i, nil
			}
		}
	case filterlang.TypeFloat:
		if n, ok := number(raw); ok {
			if x, err := strconv.ParseFloat(n, 64); err == nil {
				return f.stored(x), nil
			}
		}
	case filterlang.TypeDate:
		if ts, ok := dateValue(raw, p.Format); ok {
			if f.Millis {
				ts = ts.Truncate(time.Millisecond)
			}
			return ts, nil
		}
	}
	return nil, fmt.Errorf("cannot be read as a %s value", t)
}

// number returns a JSON number or numeric string as text.
func number(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return x.String(), true
	case string:
		return x, true
	}
	return "", false
}

// dateValue reads a date null_value: RFC 3339 (with or without zone or
// fraction), a calendar date, or epoch milliseconds (seconds for an
// epoch_second format).
func dateValue(v any, format string) (time.Time, bool) {
	s, ok := number(v)
	if !ok {
		return time.Time{}, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if strings.HasPrefix(format, "epoch_second") {
			return time.Unix(n, 0).UTC(), true
		}
		return time.UnixMilli(n).UTC(), true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// filterType maps an engine field type to its §8 filter type ("" if none).
func filterType(t string) filterlang.FieldType {
	switch t {
	case "keyword", "wildcard":
		return filterlang.TypeKeyword
	case "text", "match_only_text":
		return filterlang.TypeText
	case "long", "integer", "short", "byte", "unsigned_long":
		return filterlang.TypeInt
	case "double", "float", "half_float", "scaled_float":
		return filterlang.TypeFloat
	case "boolean":
		return filterlang.TypeBool
	case "date", "date_nanos":
		return filterlang.TypeDate
	case "geo_point":
		return filterlang.TypeGeo
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
