package adaptertest

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// filterCase is one filter with its oracle: a predicate over the corpus
// structs, written independently of the mapping package.
type filterCase struct {
	name   string
	filter map[string]any
	want   func(Doc) bool
}

func cond(field, op string, value any) map[string]any {
	return map[string]any{"field": field, "op": op, "value": value}
}

func and(children ...map[string]any) map[string]any { return map[string]any{"and": children} }
func or(children ...map[string]any) map[string]any  { return map[string]any{"or": children} }
func not(child map[string]any) map[string]any       { return map[string]any{"not": child} }

func hasTag(d Doc, tag string) bool { return slices.Contains(d.Tags, tag) }

func ratingIs(d Doc, ok func(float64) bool) bool { return d.Rating != nil && ok(*d.Rating) }

func dateIs(d Doc, ok func(time.Time) bool) bool { return d.PublishedAt != nil && ok(*d.PublishedAt) }

func at(s string) time.Time { return *day(s) }

// filterCases are grouped by operator (the Filter/<op> subtest name).
var filterCases = map[string][]filterCase{
	"eq": {
		{"lang", cond("lang", "eq", "en"), func(d Doc) bool { return d.Lang == "en" }},
		{"year", cond("year", "eq", 2020), func(d Doc) bool { return d.Year == 2020 }},
		{"rating", cond("rating", "eq", 4.5), func(d Doc) bool { return ratingIs(d, func(r float64) bool { return r == 4.5 }) }},
		{"published", cond("published", "eq", true), func(d Doc) bool { return d.Published }},
		{"published_at", cond("published_at", "eq", "2019-02-10T00:00:00Z"), func(d Doc) bool { return dateIs(d, func(x time.Time) bool { return x.Equal(at("2019-02-10")) }) }},
		{"literal_injection", cond("lang", "eq", `en" OR 1=1 --`), func(Doc) bool { return false }},
		{"unicode", cond("lang", "eq", "ja"), func(d Doc) bool { return d.Lang == "ja" }},
	},
	"ne": {
		{"lang", cond("lang", "ne", "en"), func(d Doc) bool { return d.Lang != "en" }},
		{"year", cond("year", "ne", 2020), func(d Doc) bool { return d.Year != 2020 }},
		{"published", cond("published", "ne", true), func(d Doc) bool { return !d.Published }},
	},
	"gt": {
		{"year", cond("year", "gt", 2020), func(d Doc) bool { return d.Year > 2020 }},
		{"rating", cond("rating", "gt", 4.4), func(d Doc) bool { return ratingIs(d, func(r float64) bool { return r > 4.4 }) }},
		{"published_at", cond("published_at", "gt", "2022-01-01T00:00:00Z"), func(d Doc) bool { return dateIs(d, func(x time.Time) bool { return x.After(at("2022-01-01")) }) }},
	},
	"gte": {
		{"year", cond("year", "gte", 2021), func(d Doc) bool { return d.Year >= 2021 }},
		{"rating", cond("rating", "gte", 4.5), func(d Doc) bool { return ratingIs(d, func(r float64) bool { return r >= 4.5 }) }},
		// 1618185600000 is 2021-04-12T00:00:00Z in epoch ms: inclusive bound on d11.
		{"published_at_epoch_ms", cond("published_at", "gte", 1618185600000), func(d Doc) bool { return dateIs(d, func(x time.Time) bool { return !x.Before(at("2021-04-12")) }) }},
	},
	"lt": {
		{"year", cond("year", "lt", 2017), func(d Doc) bool { return d.Year < 2017 }},
		{"rating", cond("rating", "lt", 3.6), func(d Doc) bool { return ratingIs(d, func(r float64) bool { return r < 3.6 }) }},
		{"published_at", cond("published_at", "lt", "2018-01-01T00:00:00Z"), func(d Doc) bool { return dateIs(d, func(x time.Time) bool { return x.Before(at("2018-01-01")) }) }},
	},
	"lte": {
		{"year", cond("year", "lte", 2016), func(d Doc) bool { return d.Year <= 2016 }},
		{"rating", cond("rating", "lte", 3.5), func(d Doc) bool { return ratingIs(d, func(r float64) bool { return r <= 3.5 }) }},
		{"published_at", cond("published_at", "lte", "2019-02-10T00:00:00Z"), func(d Doc) bool { return dateIs(d, func(x time.Time) bool { return !x.After(at("2019-02-10")) }) }},
	},
	"in": {
		{"lang", cond("lang", "in", []any{"fr", "de"}), func(d Doc) bool { return d.Lang == "fr" || d.Lang == "de" }},
		{"year", cond("year", "in", []any{2015, 2024}), func(d Doc) bool { return d.Year == 2015 || d.Year == 2024 }},
		{"tags_any_element", cond("tags", "in", []any{"music", "security"}), func(d Doc) bool { return hasTag(d, "music") || hasTag(d, "security") }},
		{"published", cond("published", "in", []any{false}), func(d Doc) bool { return !d.Published }},
	},
	"nin": {
		{"lang", cond("lang", "nin", []any{"en"}), func(d Doc) bool { return d.Lang != "en" }},
		{"year", cond("year", "nin", []any{2019, 2020, 2021}), func(d Doc) bool { return d.Year < 2019 || d.Year > 2021 }},
	},
	"contains": {
		{"tags_element", cond("tags", "contains", "coffee"), func(d Doc) bool { return hasTag(d, "coffee") }},
		{"title_substring", cond("title", "contains", "Tokyo"), func(d Doc) bool { return strings.Contains(d.Title, "Tokyo") }},
		{"literal_wildcard", cond("tags", "contains", "*"), func(Doc) bool { return false }},
	},
	"exists": {
		{"rating_true", cond("rating", "exists", true), func(d Doc) bool { return d.Rating != nil }},
		{"rating_false", cond("rating", "exists", false), func(d Doc) bool { return d.Rating == nil }},
		{"published_at_false", cond("published_at", "exists", false), func(d Doc) bool { return d.PublishedAt == nil }},
		{"tags_true", cond("tags", "exists", true), func(d Doc) bool { return d.Tags != nil }},
		{"tags_false", cond("tags", "exists", false), func(d Doc) bool { return d.Tags == nil }},
	},
	"nesting": {
		{"and", and(cond("lang", "eq", "en"), cond("year", "gte", 2020)), func(d Doc) bool { return d.Lang == "en" && d.Year >= 2020 }},
		{"or", or(cond("lang", "eq", "fr"), cond("tags", "contains", "music")), func(d Doc) bool { return d.Lang == "fr" || hasTag(d, "music") }},
		{"not", not(cond("lang", "eq", "en")), func(d Doc) bool { return d.Lang != "en" }},
		{"single_child_and", and(cond("year", "eq", 2019)), func(d Doc) bool { return d.Year == 2019 }},
		{"double_not", not(not(cond("tags", "contains", "coffee"))), func(d Doc) bool { return hasTag(d, "coffee") }},
		{"and_or_not", and(or(cond("year", "lt", 2018), cond("year", "gt", 2022)), not(cond("published", "eq", false))),
			func(d Doc) bool { return (d.Year < 2018 || d.Year > 2022) && d.Published }},
		{"not_exists_or_low", or(not(cond("rating", "exists", true)), cond("rating", "lt", 3.5)),
			func(d Doc) bool { return d.Rating == nil || *d.Rating < 3.5 }},
		{"date_window", and(cond("published_at", "gte", "2019-01-01T00:00:00Z"), cond("published_at", "lt", "2021-01-01T00:00:00Z")),
			func(d Doc) bool {
				return dateIs(d, func(x time.Time) bool { return !x.Before(at("2019-01-01")) && x.Before(at("2021-01-01")) })
			}},
		{"deep", and(or(and(cond("tags", "contains", "coffee"), not(cond("lang", "eq", "en"))), cond("tags", "contains", "science")), cond("year", "gte", 2018)),
			func(d Doc) bool {
				return ((hasTag(d, "coffee") && d.Lang != "en") || hasTag(d, "science")) && d.Year >= 2018
			}},
	},
}

// invalidFilters must be rejected with -32602 and data.field.
var invalidFilters = []struct {
	name   string
	filter map[string]any
	field  string
}{
	{"empty_and", map[string]any{"and": []any{}}, "filter"},
	{"empty_or", map[string]any{"or": []any{}}, "filter"},
	{"int_given_string", cond("year", "eq", "2020"), "filter.year"},
	{"int_given_fraction", cond("year", "eq", 2020.5), "filter.year"},
	{"bool_given_string", cond("published", "eq", "true"), "filter.published"},
	{"float_given_string", cond("rating", "gt", "high"), "filter.rating"},
	{"range_on_keyword", cond("lang", "gt", "en"), "filter.lang"},
	{"bad_date", cond("published_at", "gte", "not-a-date"), "filter.published_at"},
	{"in_given_scalar", cond("lang", "in", "en"), "filter.lang"},
	{"exists_given_string", cond("rating", "exists", "yes"), "filter.rating"},
	{"nested_mismatch", and(cond("lang", "eq", "en"), or(cond("year", "eq", "x"))), "filter.year"},
}

// sortedOps returns the keys of filterCases in a stable order.
func sortedOps() []string {
	ops := make([]string, 0, len(filterCases))
	for op := range filterCases {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}

func testFilter(t *testing.T, mk HarnessMaker) {
	e := newEnv(t, mk, full)
	for _, op := range sortedOps() {
		t.Run(op, func(t *testing.T) {
			for _, tc := range filterCases[op] {
				t.Run(tc.name, func(t *testing.T) { e.checkFilterSet(t, tc) })
			}
		})
	}
	t.Run("invalid", func(t *testing.T) {
		for _, tc := range invalidFilters {
			t.Run(tc.name, func(t *testing.T) {
				e.skipUnlessFilter(t, tc.filter)
				_, rerr := e.retrieve(t, P{"query": "espresso", "k": 5, "filter": tc.filter})
				wantError(t, rerr, rcp.CodeInvalidParams, tc.field, "")
			})
		}
	})
	t.Run("sparse", func(t *testing.T) {
		// Filters apply to the lexical stage too: "espresso" matches d01–d03.
		e.skipUnlessMode(t, rcp.ModeSparse)
		tc := filterCase{"published", cond("published", "eq", true), func(d Doc) bool { return d.Published }}
		e.skipUnlessFilter(t, tc.filter)
		res := e.mustRetrieve(t, P{"query": "espresso", "k": 10, "mode": "sparse", "filter": tc.filter})
		if diff := cmp.Diff([]string{"d01", "d02"}, sortedIDs(res.Hits)); diff != "" {
			t.Errorf("sparse filtered ids (-want +got):\n%s", diff)
		}
	})
}

// checkFilterSet compares the filtered result's ID set with the oracle's.
func (e *env) checkFilterSet(t *testing.T, tc filterCase) {
	e.skipUnlessFilter(t, tc.filter)
	e.skipUnlessMode(t, rcp.ModeDense) // dense reaches every document
	k := len(e.schema.Docs)
	if e.maxK() < k {
		t.Skipf("retrieve.maxK %d < corpus size %d", e.maxK(), k)
	}
	res := e.mustRetrieve(t, P{"query": QueryEverything, "k": k, "mode": "dense", "filter": tc.filter})
	if diff := cmp.Diff(oracleIDs(e.schema.Docs, tc.want), sortedIDs(res.Hits)); diff != "" {
		t.Errorf("filter %s: ids (-want +got):\n%s", P(tc.filter), diff)
	}
}

// oracleIDs returns the sorted ids of the docs for which want holds.
func oracleIDs(docs []Doc, want func(Doc) bool) []string {
	ids := []string{}
	for _, d := range docs {
		if want(d) {
			ids = append(ids, d.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

func sortedIDs(hits []rcp.Hit) []string {
	ids := hitIDs(hits)
	sort.Strings(ids)
	return ids
}

func hitIDs(hits []rcp.Hit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}

// filterRefs collects the fields and operators a filter tree uses.
func filterRefs(f any, fields, ops map[string]bool, pairs map[[2]string]bool) {
	switch n := f.(type) {
	case map[string]any:
		if fld, ok := n["field"].(string); ok {
			op := n["op"].(string)
			fields[fld], ops[op], pairs[[2]string{fld, op}] = true, true, true
			return
		}
		for _, key := range []string{"and", "or", "not"} {
			if c, ok := n[key]; ok {
				filterRefs(c, fields, ops, pairs)
			}
		}
	case []map[string]any:
		for _, c := range n {
			filterRefs(c, fields, ops, pairs)
		}
	}
}

// filterSkipReason says why filter f cannot be sent to e ("" if it can).
// Besides the advertised fields and operators, each field serves only the
// operators whose native semantics are exact for it (Engine.FieldOps, §8).
func (e *env) filterSkipReason(f map[string]any) string {
	if e.caps.Filter == nil {
		return "not advertised: filter"
	}
	fields, ops, pairs := map[string]bool{}, map[string]bool{}, map[[2]string]bool{}
	filterRefs(f, fields, ops, pairs)
	for fld := range fields {
		if _, ok := e.caps.Filter.Fields[fld]; !ok {
			return "not advertised: filter.fields lacks " + fld
		}
	}
	for op := range ops {
		if !slices.Contains(e.caps.Filter.Operators, op) {
			return "not advertised: filter.operators lacks " + op
		}
	}
	for p := range pairs {
		if !slices.Contains(e.eng.FieldOps(p[0]), filterlang.Op(p[1])) {
			return "not served: field " + p[0] + " does not support operator " + p[1]
		}
	}
	return ""
}

func (e *env) skipUnlessFilter(t *testing.T, f map[string]any) {
	t.Helper()
	if why := e.filterSkipReason(f); why != "" {
		t.Skip(why)
	}
}
