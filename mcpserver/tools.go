package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// defaultK is k when a search gives none (at most maxK).
const defaultK = 10

// searchArgs are the arguments a search tool takes; anything else is
// -32602 naming the argument.
var searchArgs = map[string]bool{"query": true, "k": true, "mode": true, "filter": true, "cursor": true, "tokenBudget": true, "sessionId": true}

func (s *Service) searchTool(e *Engine, caps rcp.Capabilities, name string) *mcp.Tool {
	plan := planFields(caps.Filter, s.o.MaxSchemaFields)
	tb := 0
	if caps.Retrieve.TokenBudget {
		tb = s.o.TokenBudget
	}
	return &mcp.Tool{
		Name:         name,
		Title:        s.searchTitle(e),
		Description:  s.searchDescription(e, caps, plan),
		InputSchema:  searchSchema(caps, plan, tb, e.MaxQueryChars),
		OutputSchema: s.outSched,
		Annotations: &mcp.ToolAnnotations{
			Title: s.searchTitle(e), ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false),
		},
	}
}

func (s *Service) searchTitle(e *Engine) string {
	if e.Name == "" {
		return "Search every index"
	}
	return "Search " + e.Name
}

// searchDescription names the corpus, its filterable fields and what each
// mode means, and says how to reach fields the schema does not list.
func (s *Service) searchDescription(e *Engine, caps rcp.Capabilities, plan fieldPlan) string {
	var b strings.Builder
	if e.Name == "" {
		names := make([]string, 0, len(s.o.Engines))
		for _, x := range s.o.Engines {
			names = append(names, x.Name)
		}
		fmt.Fprintf(&b, "Search all indices at once (%s); their ranked lists are fused and every hit is tagged with the index it came from. ", strings.Join(names, ", "))
	} else if e.Describe != nil {
		if d := strings.TrimSpace(e.Describe()); d != "" {
			b.WriteString(d)
			b.WriteString(" ")
		}
	}
	if rc := caps.Retrieve; rc != nil {
		if len(rc.Modes) > 0 {
			b.WriteString(modeDescription(rc.Modes))
			b.WriteString(" ")
		}
		if rc.MaxK > 0 {
			fmt.Fprintf(&b, "At most %d hits per call. ", rc.MaxK)
		}
	}
	if f := caps.Filter; f != nil && len(f.Fields) > 0 {
		b.WriteString("Filterable fields: ")
		for i, n := range plan.named {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (%s)", n, fieldFacts(f, n))
		}
		b.WriteString(". ")
		if plan.omitted > 0 {
			fmt.Fprintf(&b, "%d more filterable fields are not listed here; read the resource %s for all of them with their types and operators. ", plan.omitted, probeURI(e.Name))
		}
	}
	if caps.Pagination != nil {
		b.WriteString("For more hits, call again with the same arguments and cursor set to the result's nextCursor.")
	}
	return strings.TrimSpace(b.String())
}

// fieldFacts is a filter field's type and, for a float field, the
// precision it is stored at and what that means for equality.
func fieldFacts(f *rcp.FilterCap, name string) string {
	p, ok := f.FieldPrecision[name]
	switch {
	case !ok:
		return f.Fields[name]
	case p.Rounds():
		return fmt.Sprintf("%s, stored as %s: values that round alike are equal", f.Fields[name], p)
	}
	return fmt.Sprintf("%s, stored as %s", f.Fields[name], p)
}

// standInTool is the search tool of an engine that is not up yet: a
// query, and a description that says so. Its list is refreshed once the
// engine is up.
func (s *Service) standInTool(e *Engine) *mcp.Tool {
	return &mcp.Tool{
		Name:  s.toolName("search", e.Name),
		Title: s.searchTitle(e),
		Description: fmt.Sprintf("Search the %q index. Its engine is not reachable yet: calls answer with a retryable error "+
			"(RCP -32010 and the time to wait) until it is, and this tool list is then refreshed with the full search tool.", e.Name),
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "what to search for"}}},
	}
}

// standIn is the handler of the stand-in search tool: the engine's
// answer while it is not up (-32010 with the retry hint), the search
// tool's once it is.
func (s *Service) standIn(e *Engine, required func() bool) mcp.ToolHandler {
	search := s.search(e, required)
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !e.pending() {
			return search(ctx, req)
		}
		ctx, berr := bind(ctx, req, required)
		if berr != nil {
			return s.errorResult(berr), nil
		}
		ctx, done := s.observe(ctx, e, rcp.MethodRetrieve, req.Params.Arguments)
		_, err := e.Backend.Retrieve(ctx, &rcp.RetrieveParams{})
		done(err)
		if err == nil || rcp.AsError(err).Code != rcp.CodeBackendUnavailable { // up meanwhile
			return search(ctx, req)
		}
		return s.errorResult(err), nil
	}
}

// search is the handler of a search tool over e.
func (s *Service) search(e *Engine, required func() bool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, berr := bind(ctx, req, required)
		if berr != nil {
			return s.errorResult(berr), nil
		}
		p, rerr := s.retrieveParams(e, req.Params.Arguments)
		var raw json.RawMessage // what telemetry reads (_meta): never a refused call's
		if rerr == nil {
			raw = req.Params.Arguments
		}
		ctx, done := s.observe(ctx, e, rcp.MethodRetrieve, raw)
		if rerr != nil {
			done(rerr)
			return s.errorResult(rerr), nil
		}
		ctx, cancel := s.withDeadline(ctx)
		defer cancel()
		ctx = relay(ctx, req)
		res, err := e.Backend.Retrieve(ctx, p)
		done(err)
		if err != nil {
			return s.errorResult(err), nil
		}
		structured, err := res.AppendJSON(nil)
		if err != nil {
			return s.errorResult(err), nil
		}
		// The result is encoded once, by the same encoder as an RCP
		// answer; the SDK carries the bytes as they are (encodedJSON).
		return &mcp.CallToolResult{Content: hitsText(res, p), StructuredContent: encodedJSON(structured)}, nil
	}
}

// encodedJSON is a search's answer as a tool's structured content,
// written by the RCP encoder (rcp.RetrieveResult.AppendJSON), whose
// output is compact, valid and HTML-escaped: as encoding/json would write
// it. The SDK writes it into the tool result through AppendCompactJSON as
// it is, where it would check and compact a json.RawMessage once more.
// The handler encodes the answer before handing it over, so that an
// answer that cannot be encoded is the tool's error result, never a
// failure of the SDK's own encoding.
type encodedJSON []byte

// MarshalJSON implements json.Marshaler.
func (e encodedJSON) MarshalJSON() ([]byte, error) { return e, nil }

// Len is the encoded answer's length, which the SDK sizes the result
// it writes by.
func (e encodedJSON) Len() int { return len(e) }

// AppendCompactJSON appends the encoded answer.
func (e encodedJSON) AppendCompactJSON(dst []byte) ([]byte, bool) { return append(dst, e...), true }

// retrieveParams turns a search tool's arguments into retrieve params,
// decoding them once: only the tool's arguments are accepted, k defaults
// to defaultK (at most maxK) and the configured tokenBudget applies when
// none is given and the engine packs to a budget.
func (s *Service) retrieveParams(e *Engine, args json.RawMessage) (*rcp.RetrieveParams, *rcp.Error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, rcp.InvalidParams("query", "query is required")
	}
	names, err := rcp.MemberNames(trimmed)
	if err != nil {
		return nil, rcp.InvalidParams("arguments", "arguments must be a JSON object")
	}
	sort.Strings(names)
	caps := e.Backend.Capabilities()
	has := func(n string) bool {
		_, found := slices.BinarySearch(names, n)
		return found
	}
	for _, n := range names {
		if !searchArgs[n] || n == "sessionId" && caps.Session == nil {
			return nil, rcp.InvalidParams(n, "unknown argument %q", n)
		}
	}
	if !has("query") {
		return nil, rcp.InvalidParams("query", "query is required")
	}
	p, perr := rcp.DecodeParams[rcp.RetrieveParams](trimmed)
	if perr != nil {
		return nil, perr
	}
	rc := caps.Retrieve
	if !has("k") {
		k := int64(defaultK)
		if rc != nil && rc.MaxK > 0 {
			k = min(k, int64(rc.MaxK))
		}
		p.K = &k
	}
	if !has("tokenBudget") && s.o.TokenBudget > 0 && rc != nil && rc.TokenBudget {
		tb := int64(s.o.TokenBudget)
		p.TokenBudget = &tb
	}
	return p, nil
}

// hitsText renders a result as one text block per hit plus a footer: what
// a model reads when it does not use structured content.
func hitsText(res *rcp.RetrieveResult, p *rcp.RetrieveParams) []mcp.Content {
	scale, mode := "", ""
	if res.Meta != nil {
		scale, _ = res.Meta["scoreScale"].(string)
		mode, _ = res.Meta["mode"].(string)
	}
	out := make([]mcp.Content, 0, len(res.Hits)+1)
	for i := range res.Hits {
		out = append(out, &mcp.TextContent{Text: hitText(i+1, &res.Hits[i], scale)})
	}
	var b strings.Builder
	switch len(res.Hits) {
	case 0:
		b.WriteString("No hits.")
	case 1:
		b.WriteString("1 hit")
	default:
		fmt.Fprintf(&b, "%d hits", len(res.Hits))
	}
	if mode != "" {
		fmt.Fprintf(&b, " (mode %s", mode)
		if scale != "" {
			fmt.Fprintf(&b, ", scores on the %s scale", scale)
		}
		b.WriteString(")")
	}
	if len(res.Hits) > 0 {
		b.WriteString(".")
	}
	if res.NextCursor != "" {
		fmt.Fprintf(&b, " More results: call again with the same arguments and cursor %q.", res.NextCursor)
	}
	if res.Usage != nil && len(res.Usage.Notes) > 0 {
		fmt.Fprintf(&b, " Notes: %s.", strings.Join(res.Usage.Notes, "; "))
	}
	out = append(out, &mcp.TextContent{Text: b.String()})
	return out
}

// hitText is one hit: rank, title, id, score with its scale, source, the
// §15 trust level (untrusted text is fenced and marked as data), then the
// text.
func hitText(rank int, h *rcp.Hit, scale string) string {
	var b strings.Builder
	title := ""
	source := ""
	if c := h.Citation; c != nil {
		title = c.Title
		source = c.URI
		if source == "" {
			source = c.Source
		}
	}
	if title == "" {
		if t, ok := rcp.MetaValue(h.Meta["title"]).(string); ok {
			title = t
		}
	}
	b.Grow(len(h.Text) + len(title) + len(source) + len(h.ID) + 96)
	b.WriteByte('[')
	b.WriteString(strconv.Itoa(rank))
	b.WriteString("] ")
	if title != "" {
		b.WriteString(oneLine(title, 200))
		b.WriteString(" ")
	}
	b.WriteString("(id ")
	b.WriteString(h.ID)
	b.WriteString(", score ")
	b.WriteString(strconv.FormatFloat(h.Score, 'g', 6, 64))
	if scale != "" {
		b.WriteByte(' ')
		b.WriteString(scale)
	}
	b.WriteString(")")
	if source != "" {
		b.WriteString("\nsource: ")
		b.WriteString(oneLine(source, 500))
	}
	level := ""
	if h.Trust != nil {
		level = h.Trust.Level
	}
	if level != "" {
		b.WriteString("\ntrust: ")
		b.WriteString(level)
		if h.Trust.InjectionSuspected {
			b.WriteString(" (prompt injection suspected)")
		}
	}
	if h.Text != "" {
		if level == "trusted" {
			b.WriteByte('\n')
			b.WriteString(h.Text)
		} else {
			b.WriteString("\n<untrusted-content>\n")
			b.WriteString(strings.ReplaceAll(h.Text, "</untrusted-content>", "</untrusted-content\u200b>"))
			b.WriteString("\n</untrusted-content>")
		}
	}
	return b.String()
}

// oneLine folds s to one line of at most n bytes.
func oneLine(s string, n int) string {
	if !isOneLine(s) {
		s = strings.Join(strings.Fields(s), " ")
	}
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// isOneLine reports whether s is already what strings.Fields and a join
// with single spaces make of it: ASCII with no space at either end, no
// other white space and no two spaces in a row.
func isOneLine(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return s == ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' || c == ' ' && s[i-1] == ' ' {
			return false
		}
	}
	return true
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func ptr[T any](v T) *T { return &v }
