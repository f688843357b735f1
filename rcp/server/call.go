package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
)

// call is one accepted request. out is set when the request was answered
// at accept time (gating and envelope errors).
type call struct {
	sess   *session
	id     jsonrpc.ID
	method string
	e      *entry
	params json.RawMessage
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   context.CancelFunc
	rep    *reporter
	out    []byte
	done   func(error) // Options.Observe's completion; nil when unobserved
}

// job is one accepted frame: a single message or a batch (§11).
type job struct {
	batch bool
	calls []*call
	out   []byte // frame-level answer (parse error, empty or oversized batch)
}

// accept decodes a frame, runs notifications immediately (cancel preempts,
// §7.14), gates every request (§13, §7) and registers the survivors as
// in-flight. It is called in arrival order; run may then be concurrent.
// pathMethod, when set, is the HTTP path's method that every request in the
// frame must name (§5.2).
func (sess *session) accept(ctx context.Context, data []byte, emit func([]byte), pathMethod string) *job {
	fr, derr := jsonrpc.DecodeFrame(data)
	if derr != nil {
		return &job{out: errorFrame(jsonrpc.NullID, decodeErr(derr))}
	}
	if fr.Batch && len(fr.Members) > sess.srv.opts.MaxBatch {
		return &job{out: errorFrame(jsonrpc.NullID, rcp.InvalidParams("batch",
			"batch of %d exceeds the limit of %d", len(fr.Members), sess.srv.opts.MaxBatch))}
	}
	j := &job{batch: fr.Batch}
	for _, m := range fr.Members {
		if c := sess.acceptMember(ctx, m, emit, pathMethod); c != nil {
			j.calls = append(j.calls, c)
		}
	}
	return j
}

func (sess *session) acceptMember(ctx context.Context, m jsonrpc.Member, emit func([]byte), pathMethod string) *call {
	switch {
	case m.Response != nil:
		sess.srv.log.Debug("ignoring a response frame; this server sends no requests", "id", m.ID.String())
		return nil
	case m.Request == nil:
		return &call{id: m.ID, out: errorFrame(m.ID, decodeErr(m.Err))}
	case m.Request.IsNotification():
		if m.Err == nil {
			sess.handleNotification(m.Request)
		}
		return nil
	}
	req := m.Request
	if pathMethod != "" && req.Method != pathMethod {
		return &call{id: req.ID, out: errorFrame(req.ID, rcp.NewError(rcp.CodeInvalidRequest,
			"method %q in the body does not match %q in the path", req.Method, pathMethod))}
	}
	var done func(error)
	if obs := sess.srv.opts.Observe; obs != nil {
		ctx, done = obs(ctx, req.Method, req.Params)
	}
	e, gerr := sess.checkRequest(ctx, req)
	if gerr == nil && m.Err != nil {
		gerr = decodeErr(m.Err)
	}
	if gerr != nil {
		if done != nil {
			done(gerr)
		}
		return &call{id: req.ID, out: errorFrame(req.ID, gerr)}
	}
	if req.Method == rcp.MethodShutdown {
		sess.closing.Store(true)
	}
	c := sess.newCall(ctx, req, e, emit)
	c.done = done
	return c
}

func (sess *session) newCall(parent context.Context, req *jsonrpc.Request, e *entry, emit func([]byte)) *call {
	meta := parseMeta(req.Params)
	c := &call{sess: sess, id: req.ID, method: req.Method, e: e, params: req.Params}
	c.ctx, c.cancel = context.WithCancelCause(parent)
	c.stop = func() {}
	if d := deadline(sess.srv.opts.Deadline, meta.deadlineMs); d > 0 {
		c.ctx, c.stop = context.WithTimeoutCause(c.ctx, d, rcp.ErrTimeout)
	}
	c.rep = sess.newReporter(meta, emit)
	c.ctx = rcp.WithReporter(c.ctx, c.rep)
	sess.inflight.add(c)
	return c
}

// initializes reports whether the job holds an accepted initialize call.
func (j *job) initializes() bool {
	for _, c := range j.calls {
		if c.out == nil && c.method == rcp.MethodInitialize {
			return true
		}
	}
	return false
}

// run executes the job and returns the encoded answer, or nil when nothing
// must be answered (notifications only, §4.5/§11).
func (j *job) run() []byte {
	if j.out != nil {
		return j.out
	}
	if !j.batch {
		if len(j.calls) == 0 {
			return nil
		}
		return j.calls[0].execute()
	}
	outs := make([][]byte, len(j.calls))
	var wg sync.WaitGroup
	for i, c := range j.calls {
		wg.Go(func() { outs[i] = c.execute() })
	}
	wg.Wait()
	if len(outs) == 0 {
		return nil
	}
	b := jsonrpc.EncodeBatch(outs)
	for _, o := range outs {
		jsonrpc.ReleaseFrame(o) // copied into the batch
	}
	return b
}

type outcome struct {
	v   any
	err error
}

// execute answers the call exactly once (§13.1): with the handler's
// outcome, or with -32006/-32014 as soon as its context is done. The
// handler runs on a goroutine of its own, so a handler that ignores its
// context cannot hold the answer back.
func (c *call) execute() []byte {
	if c.out != nil {
		return c.out
	}
	defer c.finish()
	done := make(chan outcome, 1)
	go func() {
		growStack()
		done <- c.handle()
	}()
	var o outcome
	select {
	case o = <-done:
	case <-c.ctx.Done():
		o.err = ctxError(c.ctx)
	}
	return c.conclude(o)
}

// executeInline answers the call as execute does, but runs the handler
// on the caller's goroutine, sparing a goroutine and two hand-offs
// between goroutines per call (about 6 % of a retrieve's CPU under
// load). deliver receives the answer exactly once; executeInline returns
// after deliver has. When the call's context is done before the handler
// returns, the -32006/-32014 answer is delivered at once from another
// goroutine with rescued set, while the handler still runs; its outcome,
// when it comes, is dropped. A panic in that answer's path (an Observe
// callback, deliver) is raised again on the caller's goroutine once the
// handler returns, where it would have been raised without the rescue.
func (c *call) executeInline(deliver func(out []byte, rescued bool)) {
	if c.out != nil {
		deliver(c.out, false)
		return
	}
	var answered atomic.Bool
	rescue := make(chan struct{})
	var rescuePanic any // a panic while rescuing, raised again by the caller
	stop := context.AfterFunc(c.ctx, func() {
		if !answered.CompareAndSwap(false, true) {
			return // the handler's outcome is being delivered
		}
		defer close(rescue)
		defer func() { rescuePanic = recover() }()
		out := c.conclude(outcome{err: ctxError(c.ctx)})
		c.finish()
		deliver(out, true)
	})
	growStack()
	o := c.handle()
	if !answered.CompareAndSwap(false, true) {
		<-rescue
		if rescuePanic != nil {
			panic(rescuePanic)
		}
		return
	}
	stop()
	out := c.conclude(o)
	c.finish()
	deliver(out, false)
}

// handle runs the method's handler, a panic becoming an internal error.
func (c *call) handle() (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = outcome{err: rcp.NewError(rcp.CodeInternalError, "internal error").WithCause(fmt.Errorf("panic: %v", p))}
		}
	}()
	v, err := c.e.handle(c.ctx, c)
	return outcome{v, err}
}

// conclude closes the call's progress reports, records its outcome
// (Options.Observe) and encodes the answer frame.
func (c *call) conclude(o outcome) []byte {
	c.rep.close()
	if o.err != nil {
		o.err = c.classify(o.err)
	}
	c.observed(o.err)
	if o.err != nil {
		return errorFrame(c.id, c.sess.srv.redactError(o.err))
	}
	return resultFrame(c.id, c.sess.srv.redactResult(o.v))
}

// redactError applies Options.Redact to the message and data.detail of
// err, returning err itself when nothing changes.
func (s *Server) redactError(err error) error {
	red := s.opts.Redact
	if red == nil {
		return err
	}
	e := rcp.AsError(err)
	msg, detail := red(e.Message), ""
	if e.Data != nil {
		detail = red(e.Data.Detail)
	}
	if msg == e.Message && (e.Data == nil || detail == e.Data.Detail) {
		return err
	}
	out := *e
	out.Message = msg
	if e.Data != nil {
		d := *e.Data
		d.Detail = detail
		out.Data = &d
	}
	return &out
}

// redactResult applies Options.Redact to a retrieve's usage notes (a
// federation reports there why an engine failed), copying the result only
// when something changes.
func (s *Server) redactResult(v any) any {
	res, ok := v.(*rcp.RetrieveResult)
	if s.opts.Redact == nil || !ok || res.Usage == nil {
		return v
	}
	notes := make([]string, len(res.Usage.Notes))
	changed := false
	for i, n := range res.Usage.Notes {
		notes[i] = s.opts.Redact(n)
		changed = changed || notes[i] != n
	}
	if !changed {
		return v
	}
	out, usage := *res, *res.Usage
	usage.Notes = notes
	out.Usage = &usage
	return &out
}

// observed reports the call's answer to Options.Observe.
func (c *call) observed(err error) {
	if c.done != nil {
		c.done(err)
	}
}

// classify prefers the context's cause for non-RCP errors of a done call.
func (c *call) classify(err error) error {
	if _, ok := err.(*rcp.Error); !ok && c.ctx.Err() != nil {
		return ctxError(c.ctx)
	}
	if e := rcp.AsError(err); e.Code == rcp.CodeInternalError {
		c.sess.srv.log.Error("request failed", "method", c.method, "id", c.id.String(), "err", err)
	}
	return err
}

func (c *call) finish() {
	c.sess.inflight.remove(c)
	c.stop()
	c.cancel(context.Canceled)
}
