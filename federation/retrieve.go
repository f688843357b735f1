package federation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// outcome is one engine's answer.
type outcome struct {
	t   target
	res *rcp.RetrieveResult
	err *rcp.Error
}

// Retrieve is the federated retrieve (§16.2, §16.3): validate against the
// federated capabilities, fan out concurrently to the eligible engines
// under a smaller deadline, then fuse what answered.
func (a *Aggregator) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	start := time.Now()
	if a.caps.Retrieve == nil {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "no federated engine retrieves")
	}
	r, err := a.validate(p)
	if err != nil {
		return nil, err
	}
	ts, skips := a.plan(ctx, r, readHop(p.Meta, a.opts.Depth))
	if len(ts) == 0 {
		return nil, nothingToAsk(skips)
	}
	dctx, cancel, berr := budget(ctx, a.opts.Reserve)
	if berr != nil {
		return nil, berr
	}
	defer cancel()
	outs := fanOut(dctx, ts)
	answered, failed, rerr := triage(outs)
	if rerr != nil {
		return nil, rerr
	}
	skips = append(skips, failed...)
	if len(answered) == 0 {
		return nil, nothingAnswered(skips)
	}
	res := a.fuse(r, answered)
	finish(res, r, skips, start)
	return res, nil
}

// fanOut queries every target concurrently and waits for all of them or
// for ctx; an engine still running when ctx ends counts as timed out, so a
// stalled engine cannot hold the query past its deadline (§16.2).
func fanOut(ctx context.Context, ts []target) []outcome {
	ch := make(chan int, len(ts))
	outs := make([]outcome, len(ts))
	for i, t := range ts {
		outs[i].t = t
		go func() {
			res, err := t.e.Backend.Retrieve(ctx, t.params)
			outs[i].res, outs[i].err = checkResult(res, err)
			ch <- i
		}()
	}
	done := make([]bool, len(ts))
	for range ts {
		select {
		case i := <-ch:
			done[i] = true
		case <-ctx.Done():
			return abandon(ctx, outs, done)
		}
	}
	return outs
}

// abandon returns copies of the finished outcomes and a timeout for the
// rest; the goroutines still running write only to the original slice.
func abandon(ctx context.Context, outs []outcome, done []bool) []outcome {
	cp := make([]outcome, len(outs))
	for i := range outs {
		cp[i].t = outs[i].t
		if !done[i] {
			cp[i].err = ctxErr(ctx)
			continue
		}
		cp[i].res, cp[i].err = outs[i].res, outs[i].err
	}
	return cp
}

func ctxErr(ctx context.Context) *rcp.Error {
	if errors.Is(context.Cause(ctx), context.Canceled) {
		return rcp.ErrCancelled
	}
	return rcp.NewError(rcp.CodeTimeout, "engine did not answer before the deadline")
}

func checkResult(res *rcp.RetrieveResult, err error) (*rcp.RetrieveResult, *rcp.Error) {
	switch {
	case err != nil:
		return nil, rcp.AsError(err)
	case res == nil:
		return nil, rcp.NewError(rcp.CodeInternalError, "engine returned no result")
	}
	return res, nil
}

// triage splits outcomes into answers and failures. A failed required
// engine fails the whole query with its own code and data (§16.1).
func triage(outs []outcome) (answered []outcome, failed []skip, err *rcp.Error) {
	for _, o := range outs {
		if o.err == nil {
			answered = append(answered, o)
			continue
		}
		if o.t.e.Required {
			e := rcp.NewError(o.err.Code, "required engine %s: %s", o.t.e.ID, o.err.Message)
			e.Data = o.err.Data
			return nil, nil, e
		}
		failed = append(failed, skip{id: o.t.e.ID, reason: "failed", code: o.err.Code,
			note: fmt.Sprintf("failed: %d %s", o.err.Code, o.err.Message)})
	}
	return answered, failed, nil
}

// nothingToAsk answers a request no engine could take: -32005 when every
// engine lacked a requested capability, otherwise -32010.
func nothingToAsk(skips []skip) *rcp.Error {
	allCaps := len(skips) > 0
	for _, s := range skips {
		allCaps = allCaps && s.reason == "skipped"
	}
	if allCaps {
		e := rcp.NewError(rcp.CodeOptionUnsupported, "no single engine serves this combination of options: %s", joinNotes(skips))
		e.Data = &rcp.ErrorData{Detail: joinNotes(skips)}
		return e
	}
	return nothingAnswered(skips)
}

// nothingAnswered is §16.2's "every engine failed": -32010, never an
// empty success.
func nothingAnswered(skips []skip) *rcp.Error {
	e := rcp.NewError(rcp.CodeBackendUnavailable, "no federated engine answered")
	e.Data = &rcp.ErrorData{Detail: joinNotes(skips)}
	return e
}

func joinNotes(skips []skip) string {
	ns := make([]string, len(skips))
	for i, s := range skips {
		ns[i] = "engine " + s.id + ": " + s.note
	}
	return strings.Join(ns, "; ")
}

// finish fills usage and _meta.degraded (§16.2 partial failure).
func finish(res *rcp.RetrieveResult, r *request, skips []skip, start time.Time) {
	ms := time.Since(start).Milliseconds()
	res.Usage.LatencyMs = &ms
	res.Usage.Notes = append(r.notes, res.Usage.Notes...)
	if len(skips) == 0 {
		return
	}
	degraded := make([]map[string]any, len(skips))
	for i, s := range skips {
		res.Usage.Notes = append(res.Usage.Notes, "engine "+s.id+": "+s.note)
		d := map[string]any{"engine": s.id, "reason": s.reason}
		if s.code != 0 {
			d["code"] = int(s.code)
		}
		degraded[i] = d
	}
	res.Meta = map[string]any{MetaDegraded: degraded}
}
