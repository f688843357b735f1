package access

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Retrieve implements server.Backend (§15.6: retrieval scoped to the
// caller's corpus; cursors and ids never cross keys).
func (s *scoped) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	pr, ctx, err := s.enter(ctx)
	if err != nil || pr == nil {
		return s.passRetrieve(ctx, p, err)
	}
	q := *p
	q.Filter = s.merge(pr, p.Filter)
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
	return &out, nil
}

func (s *scoped) passRetrieve(ctx context.Context, p *rcp.RetrieveParams, err error) (*rcp.RetrieveResult, error) {
	if err != nil {
		return nil, err
	}
	return s.inner.Retrieve(ctx, p)
}

// merge ANDs the key's filter with the client's, before the backend
// validates the tree, so the client's filter can only narrow (§8 "and").
func (s *scoped) merge(p *Principal, client json.RawMessage) json.RawMessage {
	t := s.tenants[p.idx]
	client = nullToNil(client)
	switch {
	case t == nil:
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
	q := *p
	if q.Documents, err = s.scopeDocuments(pr, p.Documents); err != nil {
		return nil, err
	}
	res, err := s.inner.IndexAdd(ctx, &q)
	if err != nil || res == nil {
		return res, err
	}
	ids := make([]string, len(res.IDs))
	for i, id := range res.IDs {
		ids[i] = pr.unprefix(id)
	}
	return &rcp.IndexAddResult{IDs: ids}, nil
}

// scopeDocuments forces the key filter's eq fields into each document's
// meta, refuses documents still outside the filter and namespaces ids.
func (s *scoped) scopeDocuments(pr *Principal, in []rcp.Document) ([]rcp.Document, error) {
	t := s.tenants[pr.idx]
	out := make([]rcp.Document, len(in))
	for i, d := range in {
		if t != nil {
			d.Meta = maps.Clone(d.Meta)
			if d.Meta == nil {
				d.Meta = map[string]any{}
			}
			maps.Copy(d.Meta, t.force)
			if !mapping.EvalFilter(t.ast, d.Meta) {
				e := rcp.NewError(rcp.CodeUnauthorized, "documents[%d] is outside this key's scope", i)
				e.Data = &rcp.ErrorData{Field: fmt.Sprintf("documents[%d].meta", i)}
				return nil, e
			}
		}
		if pr.prefix != "" {
			if d.ID == "" {
				d.ID = mintID()
			}
			d.ID = pr.prefix + d.ID
		}
		out[i] = d
	}
	return out, nil
}

// IndexDelete implements server.Backend. With an id prefix the key can
// only name its own ids, so other keys' documents are neither deleted nor
// counted (§15.6 shared id spaces).
func (s *scoped) IndexDelete(ctx context.Context, p *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error) {
	pr, ctx, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	if pr == nil {
		return s.inner.IndexDelete(ctx, p)
	}
	if !pr.write || (s.tenants[pr.idx] != nil && pr.prefix == "") {
		return nil, rcp.NewError(rcp.CodeUnauthorized, "this key may not delete")
	}
	if pr.prefix == "" {
		return s.inner.IndexDelete(ctx, p)
	}
	ids := make([]string, len(p.IDs))
	for i, id := range p.IDs {
		ids[i] = pr.prefix + id
	}
	return s.inner.IndexDelete(ctx, &rcp.IndexDeleteParams{IDs: ids})
}

// cursorPayload is an inner cursor sealed under the key's cursor key.
type cursorPayload struct {
	C string `json:"c"`
}

func (p *Principal) sealCursor(inner string) (string, error) {
	if inner == "" {
		return "", nil
	}
	return mapping.SealCursor(p.cursorKey, cursorPayload{C: inner})
}

// openCursor unseals a cursor issued to this key; any other cursor is
// -32602 on "cursor", exactly like a forged one.
func (p *Principal) openCursor(c string) (string, error) {
	var pl cursorPayload
	if err := mapping.OpenCursor(p.cursorKey, c, &pl); err != nil {
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

// mintID returns a random RFC 4122 version-4 UUID string (as the engine
// would mint), so the prefix applies to minted ids too.
func mintID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
