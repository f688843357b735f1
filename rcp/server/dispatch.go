package server

import (
	"context"
	"encoding/json"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
)

// handlerFunc serves one call; the result must encode as a JSON object.
type handlerFunc func(ctx context.Context, c *call) (any, error)

// entry is one row of the method table (§7).
type entry struct {
	name    string
	gate    func(*rcp.Capabilities) bool // nil: ungated
	preInit bool                         // callable before initialize (§13)
	handle  handlerFunc                  // nil: defined by RCP but not served here
}

// typed adapts a Backend method to a handlerFunc, decoding params with
// rcp.DecodeParams (case-sensitive, -32602 with data.field).
func typed[P, R any](f func(context.Context, *P) (*R, error)) handlerFunc {
	return func(ctx context.Context, c *call) (any, error) {
		p, perr := rcp.DecodeParams[P](c.params)
		if perr != nil {
			return nil, perr
		}
		r, err := f(ctx, p)
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, rcp.NewError(rcp.CodeInternalError, "backend returned no result")
		}
		return r, nil
	}
}

func has[T any](p *T) bool { return p != nil }

// methodTable lists every RCP/1 method (§7) with its gate. Methods this
// server has no handler for are answered -32003 even if advertised.
func (s *Server) methodTable() map[string]*entry {
	b := s.b
	rows := []*entry{
		{name: rcp.MethodInitialize, preInit: true, handle: handleInitialize},
		{name: rcp.MethodInfo, preInit: true, handle: handleInfo},
		{name: rcp.MethodPing, preInit: true, handle: handlePing},
		{name: rcp.MethodShutdown, preInit: true, handle: handleShutdown},
		{name: rcp.MethodRetrieve, gate: func(c *rcp.Capabilities) bool { return has(c.Retrieve) }, handle: typed(b.Retrieve)},
		{name: rcp.MethodEmbed, gate: func(c *rcp.Capabilities) bool { return has(c.Embed) }, handle: typed(b.Embed)},
		{name: rcp.MethodIndexAdd, gate: func(c *rcp.Capabilities) bool { return c.Index != nil && c.Index.Writable }, handle: typed(b.IndexAdd)},
		{name: rcp.MethodIndexDelete, gate: func(c *rcp.Capabilities) bool { return has(c.Index) }, handle: typed(b.IndexDelete)},
		{name: rcp.MethodEmbedSparse, gate: func(c *rcp.Capabilities) bool { return has(c.Sparse) }},
		{name: rcp.MethodEmbedMulti, gate: func(c *rcp.Capabilities) bool { return has(c.Multi) }},
		{name: rcp.MethodRerank, gate: func(c *rcp.Capabilities) bool { return has(c.Rerank) }, handle: rerankHandler(b)},
		{name: rcp.MethodTransform, gate: func(c *rcp.Capabilities) bool { return has(c.Transform) }},
		{name: rcp.MethodGraph, gate: func(c *rcp.Capabilities) bool { return has(c.Graph) }},
		{name: rcp.MethodCatalogList, gate: func(c *rcp.Capabilities) bool { return has(c.Catalog) }},
		{name: rcp.MethodFeedback, gate: func(c *rcp.Capabilities) bool { return has(c.Feedback) }, handle: feedbackHandler(b)},
		{name: rcp.MethodMemoryBuild, gate: func(c *rcp.Capabilities) bool { return has(c.Memory) }},
		{name: rcp.MethodMemoryRecall, gate: func(c *rcp.Capabilities) bool { return has(c.Memory) }},
	}
	m := make(map[string]*entry, len(rows))
	for _, e := range rows {
		m[e.name] = e
		if e.handle == nil && e.gate(&s.caps) {
			s.log.Warn("capability advertised but method not served; answering -32003", "method", e.name)
		}
	}
	return m
}

// rerankHandler serves rerank when b implements Reranker (nil otherwise:
// the method is then answered -32003).
func rerankHandler(b Backend) handlerFunc {
	if r, ok := b.(Reranker); ok {
		return typed(r.Rerank)
	}
	return nil
}

// feedbackHandler serves feedback when b implements FeedbackReceiver.
func feedbackHandler(b Backend) handlerFunc {
	if f, ok := b.(FeedbackReceiver); ok {
		return typed(f.Feedback)
	}
	return nil
}

// checkRequest applies the §13/§7 gates before any decoding, in the order
// authorised (Options.Authorize), initialized (-32001), defined (-32004),
// advertised (-32003).
func (sess *session) checkRequest(ctx context.Context, req *jsonrpc.Request) (*entry, *rcp.Error) {
	if auth := sess.srv.opts.Authorize; auth != nil {
		if err := auth(ctx, req.Method); err != nil {
			return nil, rcp.AsError(err)
		}
	}
	e, defined := sess.srv.methods[req.Method]
	if !(defined && e.preInit) && !sess.isInitialized() {
		return nil, rcp.NewError(rcp.CodeNotInitialized, "not initialized: send initialize first")
	}
	if !defined {
		return nil, rcp.NewError(rcp.CodeUnknownMethod, "unknown method %q", req.Method)
	}
	if e.gate != nil && (!e.gate(&sess.srv.caps) || e.handle == nil) {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "capability for %q not advertised", req.Method)
	}
	return e, nil
}

// toWire is the one place a Go error becomes a JSON-RPC error object (§12);
// it never yields code 0.
func toWire(err error) *jsonrpc.WireError {
	e := rcp.AsError(err)
	w := &jsonrpc.WireError{Code: int(e.Code), Message: e.Message}
	if data := e.WireData(); data != nil {
		if b, merr := json.Marshal(data); merr == nil && string(b) != "{}" {
			w.Data = b
		}
	}
	return w
}

// decodeErr converts a jsonrpc decode failure into an *rcp.Error.
func decodeErr(d *jsonrpc.DecodeError) *rcp.Error {
	if d.Field != "" {
		return rcp.InvalidParams(d.Field, "%s", d.Message)
	}
	return rcp.NewError(rcp.Code(d.Code), "%s", d.Message)
}

// errorFrame encodes an error response for id.
func errorFrame(id jsonrpc.ID, err error) []byte {
	b, eerr := jsonrpc.EncodeResponse(&jsonrpc.Response{ID: id, Error: toWire(err)})
	if eerr != nil { // unreachable: error objects are plain strings and ints
		b, _ = jsonrpc.EncodeResponse(&jsonrpc.Response{ID: id, Error: &jsonrpc.WireError{Code: int(rcp.CodeInternalError), Message: "internal error"}})
	}
	return b
}

// resultFrame encodes a success response; an unencodable result (NaN, ±Inf,
// §4.6) or one that is not a JSON object becomes -32603.
func resultFrame(id jsonrpc.ID, v any) []byte {
	b, err := jsonrpc.EncodeResult(id, v)
	if err != nil {
		return errorFrame(id, rcp.NewError(rcp.CodeInternalError, "result could not be encoded").WithCause(err))
	}
	return b
}
