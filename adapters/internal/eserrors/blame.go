package eserrors

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
)

// Who is at fault when the engine refuses a request (HTTP 4xx). Every
// search body is built by the adapter from typed structs; the only client
// values in it that reach the engine unchanged are the filter values, the
// query text and, on writes, the documents' meta. So a refusal is the
// client's only when the engine names one of those; anything else (a
// query vector the field cannot take, a malformed body, a setting the
// cluster lacks) is the sidecar's, and is reported as a server-side
// failure (-32603), never as -32602 on the client's params.

// filterValueTypes are what a shard raises when a filter value does not
// parse as the field's type (a number or a date).
var filterValueTypes = []string{"number_format_exception", "date_time_parse_exception"}

// ClientField is the params path of the client value a search refusal
// names, "" when the sidecar built what the engine refused: "filter" for
// a filter value the field cannot parse, "query" for a query text that
// expands to more clauses than the engine allows, "k" for a page past the
// index's result window.
func ClientField(c *dsl.ErrorCause) string {
	types := c.Types()
	switch {
	case c == nil:
		return ""
	case HasAny(types, filterValueTypes), slices.Contains(types, "parse_exception") && anyReason(c, "failed to parse date field"):
		return "filter"
	case HasAny(types, []string{"too_many_clauses", "too_many_nested_clauses"}):
		return "query"
	case anyReason(c, "Result window is too large"):
		return "k"
	}
	return ""
}

// anyReason reports whether any reason in c's cause tree contains s.
func anyReason(c *dsl.ErrorCause, s string) bool {
	found := false
	walk(c, func(x *dsl.ErrorCause) {
		found = found || strings.Contains(x.Reason, s)
	})
	return found
}

// walk calls fn on c and every cause below it: root causes, the
// caused_by chain, shard failures.
func walk(c *dsl.ErrorCause, fn func(*dsl.ErrorCause)) {
	if c == nil {
		return
	}
	fn(c)
	for i := range c.RootCause {
		walk(&c.RootCause[i], fn)
	}
	walk(c.CausedBy, fn)
	for _, f := range c.FailedShards {
		walk(f.Reason, fn)
	}
}

// maxReason bounds Reason's length in bytes.
const maxReason = 300

var (
	// preview starts the part of a reason that quotes a value ("Preview of
	// invalid vector: …", "Preview of field's value: '…'").
	preview = regexp.MustCompile(`[;.,]?\s*Preview of .*$`)
	// quoted is a quoted string: a value, an id or document text.
	quoted = regexp.MustCompile(`'[^']*'|"[^"]*"`)
	// bracketed is a bracketed token; names of fields, types and settings
	// are kept, anything else (numbers, values, text) is not.
	bracketed = regexp.MustCompile(`\[[^\[\]]*\]`)
	name      = regexp.MustCompile(`^\[[A-Za-z_][A-Za-z0-9_.\-]{0,63}\]$`)
	// digits are the numbers left outside brackets (vector components,
	// offsets), not digits inside a word (int8, field1).
	digits = regexp.MustCompile(`-?\b\d+(\.\d+)?([eE][-+]?\d+)?\b`)
)

// Reason is the engine's reason for refusing a request, fit for
// error.data.detail: the most specific cause's type and reason, with
// quoted strings, value previews, bracketed values and numbers removed
// (they can carry document text or values derived from the query), at
// most maxReason bytes.
func Reason(c *dsl.ErrorCause) string {
	root := mostSpecific(c)
	if root == nil {
		return ""
	}
	r := preview.ReplaceAllString(root.Reason, "")
	r = quoted.ReplaceAllString(r, "'…'")
	r = bracketed.ReplaceAllStringFunc(r, func(b string) string {
		if name.MatchString(b) {
			return b
		}
		return "[…]"
	})
	r = digits.ReplaceAllStringFunc(r, func(d string) string { return "…" })
	r = strings.Join(strings.Fields(r), " ")
	out := root.Type
	if r != "" {
		out += ": " + r
	}
	if len(out) > maxReason {
		out = strings.ToValidUTF8(out[:maxReason], "") + "…"
	}
	return out
}

// mostSpecific is the first root cause, else the end of the caused_by
// chain, else c itself.
func mostSpecific(c *dsl.ErrorCause) *dsl.ErrorCause {
	switch {
	case c == nil:
		return nil
	case len(c.RootCause) > 0:
		return &c.RootCause[0]
	}
	for c.CausedBy != nil {
		c = c.CausedBy
	}
	return c
}

// documentTypes are what the engine raises for a document its mapping
// refuses.
var documentTypes = []string{"mapper_parsing_exception", "document_parsing_exception"}

// refusedField reads the field a document refusal names.
var refusedField = regexp.MustCompile(`failed to parse field \[([^\[\]]+)\]`)

// DocumentField is the params path of the client value a bulk item's
// refusal names: "documents[i].meta" when the mapping refused document i,
// "" when the refused field is one of sidecarFields (the vector field the
// sidecar fills with its embedder's vectors) or the refusal is not about
// the document.
func DocumentField(i int, c *dsl.ErrorCause, sidecarFields ...string) string {
	if !HasAny(c.Types(), documentTypes) {
		return ""
	}
	owned := false
	walk(c, func(x *dsl.ErrorCause) {
		if m := refusedField.FindStringSubmatch(x.Reason); m != nil && slices.Contains(sidecarFields, m[1]) {
			owned = true
		}
	})
	if owned {
		return ""
	}
	return "documents[" + strconv.Itoa(i) + "].meta"
}

// Refused reports whether an HTTP status refuses the request itself: a
// 4xx other than not found (404), method (405), size (413) and rate
// limit (429), which say something about the target or the load.
func Refused(status int) bool {
	return status/100 == 4 && status != 404 && status != 405 && status != 413 && status != 429
}
