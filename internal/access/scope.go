package access

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// tenant is a key's compiled scope on one backend: its filter and its
// tenant value.
type tenant struct {
	raw   json.RawMessage // nil: no filter
	ast   filterlang.Filter
	force map[string]any // eq conditions written into every document
	// fields are the meta paths the filter names, sorted: a write may give
	// each at most one value, and the forced ones only their forced value.
	fields []string
	// name is the key's tenant value; isolated reports that the engine
	// keeps each tenant in an index of its own, selected by name.
	name     string
	isolated bool
}

// scoped is a server.Backend that applies the caller's scope (§15.6).
// The compiled scope of each caller lives on its Principal, per engine.
type scoped struct {
	inner    server.Backend
	engine   string
	isolated bool
}

// fieldOpser is implemented by retrieval.Engine (per-field operators, §8).
type fieldOpser interface {
	FieldOps(field string) []filterlang.Op
}

// Backend wraps b, served as engine ("" for an aggregator), so that every
// call made by an authenticated caller is scoped to its key:
//   - an engine outside the key's scope, or a write by a read-only key, is
//     -32012 (authorisation comes after authentication, so the capability
//     set stays the one every caller sees, §13.2);
//   - retrieve runs with {"and":[keyFilter, clientFilter]}: the client can
//     narrow but never remove or widen the key's filter;
//   - index/add refuses meta that sets a field the key's filter names
//     (in any spelling, at or above or below its path) other than to its
//     forced value (-32602 on documents[i].meta.<path>), forces the key
//     filter's eq fields into meta and refuses a document that still falls
//     outside the filter (-32012);
//   - on an engine in Options.IndexIsolated, calls carry the key's tenant
//     (adapters.WithTenant), which selects the tenant's own index;
//   - ids are namespaced with the key's id prefix on the way in and
//     stripped on the way out, so index/delete reaches only the key's ids;
//   - cursors are sealed with a per-key HMAC, so one key's cursor is
//     -32602 for another;
//   - every backend call after the first of an HTTP request (batch
//     members) takes a token from the key's bucket (-32011 when empty).
//
// Each key's filter is validated against b's advertised filter fields now,
// so a misconfigured tenant filter fails at start-up, not per request; so
// is a tenant scope the engine's tenancy mode cannot enforce (a filter
// without a tenant on an index-isolated engine, a tenant without a filter
// on a shared one).
//
// Federation: wrap each engine once with its id, and the aggregator with
// engine "". The aggregator level only charges the call; the engines it
// fans out to (same context) check their own id and scope the data but do
// not charge again, so one federated retrieve costs one token.
func (g *Guard) Backend(engine string, b server.Backend) (server.Backend, error) {
	s := &scoped{inner: b, engine: engine, isolated: slices.Contains(g.isolated, engine)}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := s.compileAll(g.pol.Load()); err != nil {
		return nil, err
	}
	g.backends = append(g.backends, s)
	return s, nil
}

// compileAll compiles the scope of every static key of pol on s, and
// checks that the token mapping's scope compiles there too, so that a
// misconfiguration fails at start-up or reload, not per request.
func (s *scoped) compileAll(pol *policy) error {
	if s.engine == "" {
		return nil
	}
	for _, p := range pol.keys {
		if (p.filter == nil && p.tenant == "") || !p.Allows(s.engine) {
			continue
		}
		if _, err := s.tenantOf(p); err != nil {
			return fmt.Errorf("access: key %q on engine %q: %w", p.id, s.engine, err)
		}
	}
	if pol.jwt != nil {
		if p := pol.jwt.sample(); p != nil {
			if _, err := compileScope(p, s.isolated, s.inner); err != nil {
				return fmt.Errorf("access: jwt tenant mapping on engine %q: %w", s.engine, err)
			}
		}
	}
	return nil
}

// tenantOf returns p's compiled scope on s (nil: none), compiling it on
// first use; a principal with a filter or tenant never passes unscoped.
func (s *scoped) tenantOf(p *Principal) (*tenant, error) {
	if (p.filter == nil && p.tenant == "") || s.engine == "" {
		return nil, nil
	}
	if t, ok := p.scopes.Load(s.engine); ok {
		return t.(*tenant), nil
	}
	t, err := compileScope(p, s.isolated, s.inner)
	if err != nil {
		return nil, err
	}
	p.scopes.Store(s.engine, t)
	return t, nil
}

// compileScope checks that the engine's tenancy mode can enforce the key's
// scope and compiles its filter.
func compileScope(p *Principal, isolated bool, b server.Backend) (*tenant, error) {
	switch {
	case isolated && p.tenant == "":
		return nil, fmt.Errorf("the engine keeps each tenant in an index of its own; a key with a filter needs a tenant")
	case !isolated && p.filter == nil:
		return nil, fmt.Errorf("the engine's tenants share one index; a tenant alone does not scope the key, give it a filter")
	}
	t := &tenant{name: p.tenant, isolated: isolated, force: map[string]any{}}
	if p.filter == nil {
		return t, nil
	}
	ft, err := compileTenant(p.filter, b)
	if err != nil {
		return nil, err
	}
	ft.name, ft.isolated = t.name, isolated
	return ft, nil
}

func compileTenant(raw json.RawMessage, b server.Backend) (*tenant, error) {
	fc := b.Capabilities().Filter
	if fc == nil {
		return nil, fmt.Errorf("the engine advertises no filter, so the key's filter cannot be enforced")
	}
	fields := make(map[string]filterlang.FieldType, len(fc.Fields))
	for n, t := range fc.Fields {
		fields[n] = filterlang.FieldType(t)
	}
	ops := make([]filterlang.Op, len(fc.Operators))
	for i, o := range fc.Operators {
		ops[i] = filterlang.Op(o)
	}
	ast, rerr := filterlang.ValidateFilter(raw, fields, ops)
	if rerr != nil {
		return nil, fmt.Errorf("filter: %s (%+v)", rerr.Message, rerr.Data)
	}
	if fo, ok := b.(fieldOpser); ok {
		if rerr := filterlang.CheckFieldOps(ast, fo.FieldOps); rerr != nil {
			return nil, fmt.Errorf("filter: %s (%+v)", rerr.Message, rerr.Data)
		}
	}
	t := &tenant{raw: raw, ast: ast, force: map[string]any{}}
	collectEq(ast, t.force)
	t.fields = filterFields(ast, nil)
	slices.Sort(t.fields)
	t.fields = slices.Compact(t.fields)
	return t, nil
}

// filterFields appends every field a filter names.
func filterFields(f filterlang.Filter, out []string) []string {
	for _, c := range filterlang.Conds(f) {
		out = append(out, c.Field)
	}
	return out
}

// collectEq gathers the eq conditions that every matching document must
// satisfy (top-level conjunction only).
func collectEq(f filterlang.Filter, into map[string]any) {
	switch n := f.(type) {
	case *filterlang.And:
		for _, c := range n.Children {
			collectEq(c, into)
		}
	case *filterlang.Cond:
		if n.Op == filterlang.OpEq {
			into[n.Field] = n.Value
		}
	}
}

// enter returns the caller to scope a call's data for, or nil to pass it
// through, and the context for the inner call. It checks the engine scope
// on every level and charges the rate limit once per call, at the
// outermost level; an aggregator ("") scopes no data itself.
func (s *scoped) enter(ctx context.Context) (*Principal, context.Context, error) {
	st := stateFrom(ctx)
	if st == nil {
		return nil, ctx, nil
	}
	if !st.p.Allows(s.engine) {
		return nil, ctx, rcp.NewError(rcp.CodeUnauthorized, "unauthorized")
	}
	if ctx.Value(chargedKey{}) == nil {
		if err := st.charge(ctx); err != nil {
			return nil, ctx, err
		}
		ctx = context.WithValue(ctx, chargedKey{}, true)
	}
	if s.engine == "" {
		return nil, ctx, nil
	}
	return st.p, ctx, nil
}

// charge lets the first backend call of an HTTP request through (the
// middleware took its token) and takes a token for every further one.
func (st *state) charge(ctx context.Context) error {
	if st.calls.Add(1) == 1 {
		return nil
	}
	if wait, ok := st.take(ctx); !ok {
		return rcp.Retryable(rcp.CodeRateLimited, retryAfterMs(wait), "rate limit exceeded")
	}
	return nil
}

// Info implements server.Backend.
func (s *scoped) Info() rcp.PeerInfo { return s.inner.Info() }

// Capabilities implements server.Backend: the same set for every caller.
func (s *scoped) Capabilities() rcp.Capabilities { return s.inner.Capabilities() }

// Conformance implements server.Backend.
func (s *scoped) Conformance() string { return s.inner.Conformance() }

// FieldOps forwards to the inner backend when it knows per-field operators.
func (s *scoped) FieldOps(field string) []filterlang.Op {
	if fo, ok := s.inner.(fieldOpser); ok {
		return fo.FieldOps(field)
	}
	return nil
}

// Embed implements server.Backend.
func (s *scoped) Embed(ctx context.Context, p *rcp.EmbedParams) (*rcp.EmbedResult, error) {
	_, ctx, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	return s.inner.Embed(ctx, p)
}
