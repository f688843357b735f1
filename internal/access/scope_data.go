package access

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Retrieve implements server.Backend (§15.6: retrieval scoped to the
// caller's corpus; cursors and ids never cross keys).
func (s *scoped) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	pr, ctx, err := s.enter(ctx)
	if err != nil || pr == nil {
		res, err := s.passRetrieve(ctx, p, err)
		return limitNote(ctx, res), err
	}
	t, err := s.scopeOf(pr)
	if err != nil {
		return nil, err
	}
	ctx = withTenant(ctx, t)
	q := *p
	q.Filter = merge(t, p.Filter)
	ctx = pr.unprefixProgress(ctx)
	if p.Cursor != "" {
		if q.Cursor, err = pr.openCursor(p.Cursor); err != nil {
			return nil, err
		}
	}
	res, err := s.inner.Retrieve(ctx, &q)
	if err != nil || res == nil {
		return res, err
	}
	out := *res
	if out.NextCursor, err = pr.sealCursor(res.NextCursor); err != nil {
		return nil, rcp.NewError(rcp.CodeInternalError, "cursor could not be sealed").WithCause(err)
	}
	out.Hits = pr.unprefixHits(res.Hits)
	return limitNote(ctx, &out), nil
}

// limitNote tells, in usage.notes, that the caller's rate limit was
// applied by this replica alone: the shared limiter did not answer, so
// the key's rate held per replica, not across them. res is copied, never
// changed in place.
func limitNote(ctx context.Context, res *rcp.RetrieveResult) *rcp.RetrieveResult {
	st := stateFrom(ctx)
	if res == nil || st == nil || !st.limitLocal.Load() {
		return res
	}
	out := *res
	u := rcp.Usage{}
	if res.Usage != nil {
		u = *res.Usage
	}
	u.Notes = append(slices.Clip(u.Notes), "rate limit: the shared state store did not answer; this key's limit was applied by this replica alone")
	out.Usage = &u
	return &out
}

func (s *scoped) passRetrieve(ctx context.Context, p *rcp.RetrieveParams, err error) (*rcp.RetrieveResult, error) {
	if err != nil {
		return nil, err
	}
	return s.inner.Retrieve(ctx, p)
}

// merge ANDs the key's filter with the client's, before the backend
// validates the tree, so the client's filter can only narrow (§8 "and").
func merge(t *tenant, client json.RawMessage) json.RawMessage {
	client = nullToNil(client)
	switch {
	case t == nil || t.raw == nil:
		return client
	case client == nil:
		return t.raw
	}
	out := make([]byte, 0, len(t.raw)+len(client)+12)
	out = append(out, `{"and":[`...)
	out = append(out, t.raw...)
	out = append(out, ',')
	out = append(out, client...)
	return append(out, "]}"...)
}

// IndexAdd implements server.Backend (§15.3: writes authorised separately).
func (s *scoped) IndexAdd(ctx context.Context, p *rcp.IndexAddParams) (*rcp.IndexAddResult, error) {
	pr, ctx, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	if pr == nil {
		return s.inner.IndexAdd(ctx, p)
	}
	if !pr.write {
		return nil, rcp.NewError(rcp.CodeUnauthorized, "this key may not write")
	}
	t, err := s.scopeOf(pr)
	if err != nil {
		return nil, err
	}
	q := *p
	if q.Documents, err = scopeDocuments(t, pr, p.Documents); err != nil {
		return nil, err
	}
	res, err := s.inner.IndexAdd(withTenant(ctx, t), &q)
	if err != nil || res == nil {
		return res, err
	}
	ids := make([]string, len(res.IDs))
	for i, id := range res.IDs {
		ids[i] = pr.unprefix(id)
	}
	return &rcp.IndexAddResult{IDs: ids}, nil
}

// withTenant marks ctx with the key's tenant scope on this engine, which
// the engine uses to select a tenant's own index and to hold the write to
// the tenancy policy.
func withTenant(ctx context.Context, t *tenant) context.Context {
	if t == nil {
		return ctx
	}
	forced := slices.Sorted(maps.Keys(t.force))
	return adapters.WithTenant(ctx, adapters.Tenant{Name: t.name, Forced: forced})
}

// scopeDocuments puts each document's meta in its canonical spelling,
// refuses meta that sets the key filter's fields (other than to their
// forced value), forces the filter's eq fields, refuses documents still
// outside the filter and namespaces ids.
func scopeDocuments(t *tenant, pr *Principal, in []rcp.Document) ([]rcp.Document, error) {
	out := make([]rcp.Document, len(in))
	for i, d := range in {
		if t != nil && t.raw != nil {
			meta, err := t.scopeMeta(d.Meta, fmt.Sprintf("documents[%d].meta", i))
			if err != nil {
				return nil, err
			}
			d.Meta = meta
		}
		if pr.prefix != "" {
			if d.ID == "" {
				d.ID = adapters.MintID()
			}
			d.ID = pr.prefix + d.ID
		}
		out[i] = d
	}
	return out, nil
}

// IndexDelete implements server.Backend. With an id prefix the key can
// only name its own ids, so other keys' documents are neither deleted nor
// counted (§15.6 shared id spaces); a tenant key on an index-isolated
// engine deletes in its own index only.
func (s *scoped) IndexDelete(ctx context.Context, p *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error) {
	pr, ctx, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	if pr == nil {
		return s.inner.IndexDelete(ctx, p)
	}
	t, err := s.scopeOf(pr)
	if err != nil {
		return nil, err
	}
	ownIndex := t != nil && t.isolated && t.name != ""
	if !pr.write || (t != nil && pr.prefix == "" && !ownIndex) {
		return nil, rcp.NewError(rcp.CodeUnauthorized, "this key may not delete")
	}
	ctx = withTenant(ctx, t)
	if pr.prefix == "" {
		return s.inner.IndexDelete(ctx, p)
	}
	ids := make([]string, len(p.IDs))
	for i, id := range p.IDs {
		ids[i] = pr.prefix + id
	}
	return s.inner.IndexDelete(ctx, &rcp.IndexDeleteParams{IDs: ids})
}

// scopeOf is tenantOf as a client-facing error: a scope that cannot be
// compiled refuses the call (-32603, the cause logged), never passes it
// unscoped.
func (s *scoped) scopeOf(pr *Principal) (*tenant, error) {
	t, err := s.tenantOf(pr)
	if err != nil {
		return nil, rcp.NewError(rcp.CodeInternalError, "the caller's scope cannot be applied on this engine").WithCause(err)
	}
	return t, nil
}

// cursorPayload is an inner cursor sealed under the key's cursor key.
type cursorPayload struct {
	C string `json:"c"`
}

func (p *Principal) sealCursor(inner string) (string, error) {
	if inner == "" {
		return "", nil
	}
	return p.cursorKeys.Seal(cursorPayload{C: inner})
}

// openCursor unseals a cursor issued to this key; any other cursor is
// -32602 on "cursor", exactly like a forged one.
func (p *Principal) openCursor(c string) (string, error) {
	var pl cursorPayload
	if err := p.cursorKeys.Open(c, &pl); err != nil {
		return "", err
	}
	return pl.C, nil
}

func (p *Principal) unprefix(id string) string {
	if p.prefix == "" {
		return id
	}
	return strings.TrimPrefix(id, p.prefix)
}

func (p *Principal) unprefixHits(hits []rcp.Hit) []rcp.Hit {
	if p.prefix == "" {
		return hits
	}
	out := make([]rcp.Hit, len(hits))
	for i, h := range hits {
		h.ID = p.unprefix(h.ID)
		out[i] = h
	}
	return out
}

// unprefixProgress returns ctx whose rcp.Reporter strips the key's id
// prefix from partial hits, so that the ids streamed in progress
// notifications are the ids of the final result (§9). A context without a
// reporter, or a key without a prefix, is returned as is.
func (p *Principal) unprefixProgress(ctx context.Context) context.Context {
	rep := rcp.ReporterFrom(ctx)
	if p.prefix == "" || rep == noReporter {
		return ctx
	}
	return rcp.WithReporter(ctx, unprefixing{Reporter: rep, p: p})
}

// noReporter is what rcp.ReporterFrom returns for a context without one.
var noReporter = rcp.ReporterFrom(context.Background())

// unprefixing is a request's rcp.Reporter seen through a key's id
// namespace.
type unprefixing struct {
	rcp.Reporter
	p *Principal
}

// Progress implements rcp.Reporter with the partial hits' ids unprefixed.
func (r unprefixing) Progress(stage string, progress float64, message string, partial []rcp.Hit) {
	r.Reporter.Progress(stage, progress, message, r.p.unprefixHits(partial))
}

// ProgressEnabled forwards the inner reporter's gate, so that the Engine
// still skips building partial hits nobody receives.
func (r unprefixing) ProgressEnabled() bool {
	g, ok := r.Reporter.(interface{ ProgressEnabled() bool })
	return !ok || g.ProgressEnabled()
}

// LogEnabled forwards the inner reporter's log gate.
func (r unprefixing) LogEnabled(level string) bool {
	g, ok := r.Reporter.(interface{ LogEnabled(string) bool })
	return !ok || g.LogEnabled(level)
}

// scopeMeta returns meta (at is its params path) canonicalised and
// scoped to the key's filter. Engines index every spelling of a path as
// one field (flat "org.id", nested {"org":{"id":…}}, objects inside
// arrays), so a value for a tenant field beside the forced one would be a
// second tenant value: each field the filter names may hold at most one
// value, the forced ones only their forced value, and no prefix of one may
// hold anything but an object. A refusal is -32602 naming the field; a
// document the filter still excludes is -32012.
func (t *tenant) scopeMeta(meta map[string]any, at string) (map[string]any, error) {
	m, rerr := filterlang.CanonicalMeta(meta, at)
	if rerr != nil {
		return nil, rerr
	}
	if m == nil {
		m = map[string]any{}
	}
	for _, f := range t.fields {
		where, v, found := filterlang.MetaAt(m, f)
		if !found {
			continue
		}
		forced, isForced := t.force[f]
		switch {
		case where != f:
			return nil, rcp.InvalidParams(at+"."+where, "meta.%s must be an object or absent: this key's tenant field %s lies below it", where, f)
		case isForced && !filterlang.EqualValue(v, forced):
			return nil, rcp.InvalidParams(at+"."+leafBelow(f, v), "meta.%s is this key's tenant field: it is set by the server and may only repeat the key's own value", f)
		case !isForced && !single(v):
			return nil, rcp.InvalidParams(at+"."+leafBelow(f, v), "meta.%s is named by this key's filter: it must hold a single value", f)
		}
	}
	for f, v := range t.force {
		setPath(m, f, v)
	}
	if !filterlang.EvalFilter(t.ast, m) {
		e := rcp.NewError(rcp.CodeUnauthorized, "%s is outside this key's scope", strings.TrimSuffix(at, ".meta"))
		e.Data = &rcp.ErrorData{Field: at}
		return nil, e
	}
	return m, nil
}

// single reports whether v is one scalar value.
func single(v any) bool {
	switch v.(type) {
	case nil, map[string]any, []any:
		return false
	}
	return true
}

// leafBelow names the first leaf path under v when v is an object at
// path, else path itself.
func leafBelow(path string, v any) string {
	obj, ok := v.(map[string]any)
	if !ok {
		return path
	}
	leaf := path
	filterlang.WalkMeta(obj, func(p string, _ any) {
		if leaf == path {
			leaf = path + "." + p
		}
	})
	return leaf
}

// setPath writes v at the dotted path of canonical meta m, creating the
// objects on the way (scopeMeta has refused anything else there).
func setPath(m map[string]any, path string, v any) {
	segs := strings.Split(path, ".")
	for _, seg := range segs[:len(segs)-1] {
		next, ok := m[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[seg] = next
		}
		m = next
	}
	m[segs[len(segs)-1]] = v
}
