package federation

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// request is a validated federated retrieve.
type request struct {
	p      *rcp.RetrieveParams
	k      int
	filter filterlang.Filter
	notes  []string
}

// skip is an engine left out of the fan-out, with why.
type skip struct {
	id     string
	reason string // "skipped" (capability), "cycle", "depth", "failed"
	code   rcp.Code
	note   string
}

// target is an engine that will be queried, with its own params.
type target struct {
	e      Engine
	params *rcp.RetrieveParams
}

// validate checks the request against the federated capability set
// (§7.7): an option no engine serves is -32005 when strict, dropped with
// a note otherwise. The params are copied, never mutated.
func (a *Aggregator) validate(p *rcp.RetrieveParams) (*request, error) {
	rc := a.caps.Retrieve
	if !p.Query.IsSet() {
		return nil, rcp.InvalidParams("query", "query is required")
	}
	var topN *int64
	if p.Rerank != nil && !p.Rerank.Disabled && p.Rerank.TopN != nil {
		n := int64(*p.Rerank.TopN)
		topN = &n
	}
	fn, ferr := rankmath.ClampFunnel(p.K, p.CandidateK, topN, rc.MaxK, 0)
	if ferr != nil {
		return nil, ferr
	}
	cp := *p
	r := &request{p: &cp, k: fn.K}
	for _, o := range a.unsupported(&cp) {
		if p.IsStrict() {
			return nil, optionErr(o.option, o.why)
		}
		o.drop(&cp)
		r.notes = append(r.notes, fmt.Sprintf("%s ignored: %s", o.option, o.why))
	}
	f, err := a.validateFilter(cp.Filter)
	if err != nil {
		return nil, err
	}
	r.filter = f
	return r, nil
}

func optionErr(option, why string) *rcp.Error {
	e := rcp.NewError(rcp.CodeOptionUnsupported, "%s: %s", option, why)
	e.Data = &rcp.ErrorData{Option: option}
	return e
}

// unsupportedOpt is an option the federation cannot honour.
type unsupportedOpt struct {
	option, why string
	drop        func(*rcp.RetrieveParams)
}

// unsupported lists the request's options outside the federated set.
func (a *Aggregator) unsupported(p *rcp.RetrieveParams) []unsupportedOpt {
	rc := a.caps.Retrieve
	var out []unsupportedOpt
	add := func(cond bool, option, why string, drop func(*rcp.RetrieveParams)) {
		if cond {
			out = append(out, unsupportedOpt{option, why, drop})
		}
	}
	add(p.Mode != "" && !slices.Contains(rc.Modes, p.Mode), "mode", fmt.Sprintf("no engine serves mode %q", p.Mode), func(q *rcp.RetrieveParams) { q.Mode = "" })
	add(p.Fusion != nil && p.Fusion.Method != "" && !slices.Contains(rc.Fusion, p.Fusion.Method), "fusion.method",
		fmt.Sprintf("fusion %q is not available", methodOf(p)), func(q *rcp.RetrieveParams) { q.Fusion = nil })
	add(p.Unit != "" && !slices.Contains(unitsOf(rc), p.Unit), "unit", fmt.Sprintf("no engine serves unit %q", p.Unit), func(q *rcp.RetrieveParams) { q.Unit = "" })
	add(p.MMR != nil && !rc.MMR, "mmr", "no engine diversifies", func(q *rcp.RetrieveParams) { q.MMR = nil })
	add(wantsRerank(p) && !rc.RerankBuiltin, "rerank", "no engine reranks inside retrieve", func(q *rcp.RetrieveParams) { q.Rerank = nil })
	add(p.TokenBudget != nil, "tokenBudget", "not honoured by the federation", func(q *rcp.RetrieveParams) { q.TokenBudget = nil })
	add(p.SessionID != "" && a.caps.Session == nil, "sessionId", "not every engine keeps sessions", func(q *rcp.RetrieveParams) { q.SessionID = "" })
	add(p.Cursor != "", "cursor", "pagination is not federated", func(q *rcp.RetrieveParams) { q.Cursor = "" })
	add(p.IndexVersion != "", "indexVersion", "snapshots are not federated", func(q *rcp.RetrieveParams) { q.IndexVersion = "" })
	add(isFilterSet(p.Filter) && a.caps.Filter == nil, "filter", "no engine filters", func(q *rcp.RetrieveParams) { q.Filter = nil })
	return out
}

func methodOf(p *rcp.RetrieveParams) rcp.FusionMethod {
	if p.Fusion == nil {
		return ""
	}
	return p.Fusion.Method
}

func wantsRerank(p *rcp.RetrieveParams) bool { return p.Rerank != nil && !p.Rerank.Disabled }

func isFilterSet(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// validateFilter checks the filter against the union of fields (§8).
func (a *Aggregator) validateFilter(raw []byte) (filterlang.Filter, error) {
	if !isFilterSet(raw) || a.caps.Filter == nil {
		return nil, nil
	}
	f, err := filterlang.ValidateFilter(raw, fieldTypeMap(a.caps.Filter), opsOf(a.caps.Filter))
	if err != nil {
		return nil, err
	}
	return f, nil
}

func fieldTypeMap(fc *rcp.FilterCap) map[string]filterlang.FieldType {
	m := make(map[string]filterlang.FieldType, len(fc.Fields))
	for k, v := range fc.Fields {
		m[k] = filterlang.FieldType(v)
	}
	return m
}

func opsOf(fc *rcp.FilterCap) []filterlang.Op {
	ops := make([]filterlang.Op, len(fc.Operators))
	for i, o := range fc.Operators {
		ops[i] = filterlang.Op(o)
	}
	return ops
}

// plan chooses the engines to query (§16.2): engines the caller may not
// use are left out silently; engines lacking a requested capability,
// on a cycle, or beyond the hop budget are skipped with a reason.
func (a *Aggregator) plan(ctx context.Context, r *request, h Hop) ([]target, []skip) {
	var ts []target
	var ss []skip
	fwd := forwardMeta(h.next(a.opts.Identity))
	for _, e := range a.engines {
		if !a.allowed(ctx, e.ID) {
			continue
		}
		if s := a.ineligible(e, r, h); s != nil {
			ss = append(ss, *s)
			continue
		}
		ts = append(ts, target{e: e, params: engineParams(r, e.Backend.Capabilities(), fwd)})
	}
	return ts, ss
}

// ineligible returns why e cannot take part, or nil.
func (a *Aggregator) ineligible(e Engine, r *request, h Hop) *skip {
	if e.Ready != nil {
		if err := e.Ready(); err != nil {
			return &skip{id: e.ID, reason: "failed", code: rcp.CodeBackendUnavailable, note: "unavailable: " + err.Error()}
		}
	}
	if e.Forwards || forwards(e.Backend) {
		switch {
		case h.onPath(a.opts.Identity):
			return &skip{id: e.ID, reason: "cycle", note: fmt.Sprintf("cycle: %q is already on the federation path %v", a.opts.Identity, h.Path)}
		case h.onPath(e.Identity):
			return &skip{id: e.ID, reason: "cycle", note: fmt.Sprintf("cycle: %q is already on the federation path %v", e.Identity, h.Path)}
		case h.Depth <= 0:
			return &skip{id: e.ID, reason: "depth", note: "federation depth exhausted; not forwarded"}
		}
	}
	if why := lacks(e.Backend.Capabilities(), r); why != "" {
		return &skip{id: e.ID, reason: "skipped", note: why}
	}
	return nil
}

// forwards reports whether b federates further (an HTTPBackend or another
// Aggregator): the hop budget and path apply to it.
func forwards(b server.Backend) bool {
	switch b.(type) {
	case *HTTPBackend, *Aggregator:
		return true
	}
	return false
}

// lacks names the first requested capability c does not advertise.
func lacks(c rcp.Capabilities, r *request) string {
	rc, p := c.Retrieve, r.p
	switch {
	case rc == nil:
		return "no retrieve capability"
	case p.Mode != "" && !slices.Contains(rc.Modes, p.Mode):
		return fmt.Sprintf("mode %q not advertised", p.Mode)
	case p.Unit != "" && !slices.Contains(unitsOf(rc), p.Unit):
		return fmt.Sprintf("unit %q not advertised", p.Unit)
	case p.MMR != nil && !rc.MMR:
		return "mmr not advertised"
	case wantsRerank(p) && !rc.RerankBuiltin:
		return "rerank not advertised"
	}
	return lacksFilter(c.Filter, r.filter)
}

// lacksFilter names the first filter field or operator f uses that fc
// does not advertise with the same type.
func lacksFilter(fc *rcp.FilterCap, f filterlang.Filter) string {
	if f == nil {
		return ""
	}
	for _, c := range filterlang.Conds(f) {
		switch {
		case fc == nil:
			return "filter not advertised"
		case fc.Fields[c.Field] != string(c.Type):
			return fmt.Sprintf("filter field %q not advertised", c.Field)
		case len(fc.Operators) > 0 && !slices.Contains(fc.Operators, string(c.Op)):
			return fmt.Sprintf("filter operator %q not advertised", c.Op)
		}
	}
	return ""
}

// engineParams is the request as sent to one engine: k at least the
// federated k (clamped to the engine's maxK), a fusion method the engine
// does not list left to its default, only the federation hop in _meta.
func engineParams(r *request, c rcp.Capabilities, meta map[string]any) *rcp.RetrieveParams {
	p := *r.p
	k := int64(r.k)
	if mk := c.Retrieve.MaxK; mk > 0 && k > int64(mk) {
		k = int64(mk)
	}
	p.K = &k
	if p.CandidateK != nil && *p.CandidateK < k {
		p.CandidateK = &k
	}
	if p.Fusion != nil && p.Fusion.Method != "" && !slices.Contains(c.Retrieve.Fusion, p.Fusion.Method) {
		f := *p.Fusion
		f.Method = ""
		p.Fusion = &f
	}
	p.Meta = meta
	return &p
}
