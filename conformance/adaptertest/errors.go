package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// prompt bounds how long a cancelled or expired request may take.
const prompt = 2 * time.Second

func testErrors(t *testing.T, mk HarnessMaker) {
	t.Run("Unreachable", func(t *testing.T) { testUnreachable(t, mk) })
	e := newEnv(t, mk, full)
	params := &rcp.RetrieveParams{Query: rcp.TextQuery("espresso"), K: ptr[int64](5)}
	t.Run("Cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		e.checkCtxError(t, ctx, params)
	})
	t.Run("DeadlineExceeded", func(t *testing.T) {
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		e.checkCtxError(t, ctx, params)
	})
	t.Run("WireDeadline", func(t *testing.T) { e.checkWireDeadline(t) })
	t.Run("WireCancel", func(t *testing.T) { e.checkWireCancel(t) })
	t.Run("SearchHonoursContext", func(t *testing.T) { e.checkSearchCtx(t) })
	t.Run("ErrorCodeTotal", func(t *testing.T) { checkErrorCodeTotal(t, e.a) })
}

func ptr[T any](v T) *T { return &v }

// testUnreachable: an engine that is not there either fails NewEngine
// cleanly, or is served and every retrieve is -32010 with retryable
// (§12.2, §13.2: a lost backend is never a narrower capability set).
func testUnreachable(t *testing.T, mk HarnessMaker) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	h, err := mk(ctx, t)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	defer h.Close()
	a, err := h.Unreachable(ctx)
	if errors.Is(err, ErrNotApplicable) {
		t.Skip("not applicable: the adapter has no network")
	}
	if err != nil {
		t.Fatalf("Unreachable: %v", err)
	}
	eng, err := retrieval.NewEngine(ctx, a, engineOptions(DefaultSchema(), full))
	if err != nil {
		t.Logf("NewEngine failed cleanly: %v", err)
		return
	}
	defer eng.Close()
	c := rcptest.NewClient(t, eng)
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	_, rerr := c.Call(ctx, rcp.MethodRetrieve, P{"query": "espresso", "k": 3})
	wantError(t, rerr, rcp.CodeBackendUnavailable, "", "")
	if rerr.Data == nil || rerr.Data.Retryable == nil || !*rerr.Data.Retryable {
		t.Errorf("-32010 without data.retryable:true (data %+v)", rerr.Data)
	}
}

// checkCtxError: a done ctx yields -32006 or -32014 promptly, no result.
func (e *env) checkCtxError(t *testing.T, ctx context.Context, p *rcp.RetrieveParams) {
	start := time.Now()
	res, err := e.eng.Retrieve(ctx, p)
	if d := time.Since(start); d > prompt {
		t.Errorf("took %v with a done context, want < %v", d, prompt)
	}
	if res != nil {
		t.Errorf("partial result with a done context: %d hits", len(res.Hits))
	}
	var re *rcp.Error
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not an *rcp.Error", err, err)
	}
	if re.Code != rcp.CodeCancelled && re.Code != rcp.CodeTimeout {
		t.Errorf("code %d (%s), want -32006 or -32014", re.Code, re.Code)
	}
}

// skipUnlessSidecarEmbeds skips when dense queries do not go through the
// fake embedder (the block: queries rely on it).
func (e *env) skipUnlessSidecarEmbeds(t *testing.T) {
	e.skipUnlessMode(t, rcp.ModeDense)
	if e.eng.Evidence().QueryInference {
		t.Skip("the engine embeds queries itself; the fake embedder cannot block")
	}
}

// checkWireDeadline: a request's _meta.deadlineMs reaches the embedder's
// ctx through server and Engine, and expiry is answered -32014 (§13.1).
func (e *env) checkWireDeadline(t *testing.T) {
	e.skipUnlessSidecarEmbeds(t)
	start := time.Now()
	_, rerr := e.retrieve(t, P{"query": BlockPrefix + "deadline", "mode": "dense", "k": 3,
		"_meta": map[string]any{"deadlineMs": 100}})
	wantError(t, rerr, rcp.CodeTimeout, "", "")
	if d := time.Since(start); d > prompt {
		t.Errorf("deadline of 100ms answered after %v", d)
	}
}

// checkWireCancel: notifications/cancel for an in-flight retrieve stops it
// and the request is still answered exactly once, with -32006 (§7.14).
func (e *env) checkWireCancel(t *testing.T) {
	e.skipUnlessSidecarEmbeds(t)
	id, err := strconv.Atoi(e.c.NextID())
	if err != nil {
		t.Fatalf("NextID: %v", err)
	}
	done := make(chan *rcp.Error, 1)
	start := time.Now()
	go func() {
		_, rerr := e.c.Call(context.Background(), rcp.MethodRetrieve, P{"query": BlockPrefix + "cancel", "mode": "dense", "k": 3})
		done <- rerr
	}()
	time.Sleep(50 * time.Millisecond)
	if err := e.c.Notify(rcp.NotifyCancel, P{"id": id, "reason": "conformance"}); err != nil {
		t.Fatalf("notify: %v", err)
	}
	select {
	case rerr := <-done:
		wantError(t, rerr, rcp.CodeCancelled, "", "")
	case <-time.After(maxBlock + prompt):
		t.Fatal("cancelled request was never answered")
	}
	if d := time.Since(start); d > prompt {
		t.Errorf("cancel answered after %v", d)
	}
}

// checkSearchCtx: Adapter.Search with a cancelled ctx returns an error and
// no candidates (Adapter contract: ctx honoured, no partial results).
func (e *env) checkSearchCtx(t *testing.T) {
	ev, err := e.a.Probe(context.Background())
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	st := pickStage(e)
	if st == "" {
		t.Skip("no stage to plan")
	}
	plan, err := e.a.Plan(planRequest(ev, st))
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cands, err := e.a.Search(ctx, plan)
	if err == nil {
		t.Fatalf("Search with a cancelled ctx succeeded with %d hits", len(cands.Hits))
	}
	if cands != nil && len(cands.Hits) > 0 {
		t.Errorf("Search returned %d hits alongside error %v", len(cands.Hits), err)
	}
	if c := e.a.ErrorCode(err); c == 0 || !c.Valid() {
		t.Errorf("ErrorCode(%v) = %d, not a §12 code", err, c)
	}
}

func pickStage(e *env) adapters.Stage {
	switch {
	case e.hasMode(rcp.ModeSparse):
		return adapters.StageLexical
	case e.hasMode(rcp.ModeDense):
		return adapters.StageDense
	}
	return ""
}

// checkErrorCodeTotal: ErrorCode classifies any error with a §12 code,
// never 0 (docs/ARCHITECTURE.md §2.5).
func checkErrorCodeTotal(t *testing.T, a adapters.Adapter) {
	for _, err := range []error{
		errors.New("boom"),
		fmt.Errorf("wrapped: %w", errors.New("inner")),
		io.EOF,
		io.ErrUnexpectedEOF,
		context.Canceled,
		context.DeadlineExceeded,
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		rcp.InvalidParams("k", "bad"),
		&rcp.Error{Message: "code zero"},
	} {
		if c := a.ErrorCode(err); c == 0 || !c.Valid() {
			t.Errorf("ErrorCode(%#v) = %d, not a §12 code", err, c)
		}
	}
}
