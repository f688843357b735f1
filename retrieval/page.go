package retrieval

// Engine-side support for the optional adapter features: units
// (§7.7.2), native recency (§7.7) and continuation paging (§10).

import (
	"context"
	"errors"
	"math"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// extendRequest adds the optional features the gate accepted to a stage
// request (its Stage set): recency only where the adapter applies it
// (gateRecency noted a dense list run without it).
func (e *Engine) extendRequest(r *retrieval, req *adapters.SearchRequest) {
	if r.unit != "" && r.unit != "chunk" {
		req.Unit = r.unit
	}
	if req.Stage == adapters.StageLexical || !e.ev.RecencyLexicalOnly {
		req.Recency = r.recency
	}
	req.IndexVersion = r.pinned
	e.continueRequest(r, req)
}

// onePerDocument keeps the best-ranked hit of each document when the unit
// is "document": each list is already collapsed by the engine, but fusing
// two lists can bring two chunks of one document together.
func onePerDocument(r *retrieval, items []item) []item {
	if r.unit != "document" {
		return items
	}
	seen := make(map[string]bool, len(items))
	out := items[:0:0]
	for _, it := range items {
		if d := it.c.DocID; d != "" && seen[d] {
			continue
		} else if d != "" {
			seen[d] = true
		}
		out = append(out, it)
	}
	return out
}

// gateRecency accepts recency only from adapters with NativeRecency, on an
// advertised date filter field with a positive finite half-life (§7.7).
func (e *Engine) gateRecency(r *retrieval) *rcp.Error {
	rc := r.p.Recency
	switch {
	case rc == nil:
		return nil
	case !e.ev.NativeRecency:
		return r.degrade("recency", "recency decay is not supported")
	case e.fields[rc.Field] != filterlang.TypeDate:
		return rcp.InvalidParams("recency.field", "recency.field must be an advertised date field")
	case !(rc.HalfLifeDays > 0) || math.IsInf(rc.HalfLifeDays, 1):
		return rcp.InvalidParams("recency.halfLifeDays", "recency.halfLifeDays must be a positive number")
	}
	if e.ev.RecencyLexicalOnly && r.mode != rcp.ModeSparse {
		// §7.7 strict rule: -32005 by default; with strict:false the dense
		// list runs without the decay and the result says so.
		const why = "recency decay applies to sparse retrieval only on this backend (a kNN search cannot be rescored exactly)"
		switch {
		case r.strict:
			return rcp.OptionUnsupported("recency", why)
		case r.mode == rcp.ModeDense:
			r.note("%s; ignored (strict:false)", why)
			return nil
		default:
			r.note("%s; applied to the sparse list only (strict:false)", why)
		}
	}
	r.recency = &adapters.Recency{Field: rc.Field, HalfLifeDays: rc.HalfLifeDays}
	return nil
}

// skip is how many ranked items precede the page: the cursor offset, or
// none when the engine continued after the previous page itself.
func (r *retrieval) skip() int {
	if r.resume != nil {
		return 0
	}
	return r.offset
}

// continuable reports whether the pages of r follow one engine list in
// engine order, so the engine can continue after the last served hit:
// a single lexical or dense stage with no sidecar reordering.
func (e *Engine) continuable(r *retrieval) bool {
	single := r.mode == rcp.ModeSparse || r.mode == rcp.ModeDense
	return e.caps.Pagination != nil && single && !r.mmr && r.rerank == nil && !e.dedups(r)
}

// continueRequest asks for a continuation on a first page, or continues
// after the previous page's last hit (§10).
func (e *Engine) continueRequest(r *retrieval, req *adapters.SearchRequest) {
	if !e.continuable(r) {
		return
	}
	if r.resume == nil {
		req.Paginate = r.p.Cursor == ""
		return
	}
	req.After, req.Resume, req.From = r.after, r.resume, r.offset
	req.K = r.funnel.K + 1
	req.CandidateK = max(r.funnel.CandidateK, req.K)
}

// nextPage seals the cursor for the page after page (§10): with the
// adapter's continuation and the last served hit's sort values when the
// stage returned one, else the offset. When no page follows, the
// continuation is released and its snapshot is not echoed.
func (e *Engine) nextPage(ctx context.Context, r *retrieval, rk *ranking, page []item) (string, error) {
	served := len(page)
	if e.caps.Pagination == nil || served == 0 || r.skip()+served >= len(rk.items) {
		e.release(ctx, r, rk)
		return "", nil
	}
	st := cursorState{Query: requestHash(r), Mode: r.mode, Offset: r.offset + served}
	if last := page[served-1].c.Sort; rk.next != nil && len(last) > 0 {
		st.After, st.Next = last, rk.next
	} else {
		e.release(ctx, r, rk)
	}
	return e.keys.Seal(st)
}

// release frees the stage's continuation, if any, and drops the snapshot
// it would have echoed (a released snapshot cannot be pinned) unless the
// client pinned it: adapters keep pinned snapshots alive.
func (e *Engine) release(ctx context.Context, r *retrieval, rk *ranking) {
	if rk.next == nil {
		return
	}
	if rel, ok := e.a.(adapters.Releaser); ok {
		err := rel.Release(context.WithoutCancel(ctx), rk.next)
		switch {
		case errors.Is(err, adapters.ErrNoRelease): // a decorator over an adapter that keeps nothing
			rk.next = nil
			return
		case err != nil:
			e.log.Warn("release continuation", "err", err)
		}
		if r.pinned == "" {
			rk.version = ""
		}
	}
	rk.next = nil
}

// sealVersion turns an adapter snapshot into the opaque indexVersion.
func (e *Engine) sealVersion(r *retrieval, v string) string {
	if v == "" {
		return ""
	}
	s, err := e.keys.Seal(versionState{V: v, T: r.tenant})
	if err != nil {
		e.log.Warn("seal indexVersion", "err", err)
		return ""
	}
	return s
}

// openVersion restores a pinned snapshot (§7.7.1); a token this server did
// not issue is -32602 on field "indexVersion".
func (e *Engine) openVersion(r *retrieval) *rcp.Error {
	var st versionState
	if err := e.keys.Open(r.p.IndexVersion, &st); err != nil || st.V == "" || st.T != r.tenant {
		return rcp.InvalidParams("indexVersion", "indexVersion was not issued by this server")
	}
	r.pinned = st.V
	return nil
}
