package resilient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func search(r *Adapter) error {
	_, err := r.Search(context.Background(), &adapters.Plan{})
	return err
}

func TestRetryOnlyOnRetryableCodes(t *testing.T) {
	cases := []struct {
		code  rcp.Code
		calls int64
	}{
		{rcp.CodeBackendUnavailable, 3},
		{rcp.CodeRateLimited, 3},
		{rcp.CodeTimeout, 3},
		{rcp.CodeInvalidParams, 1},
		{rcp.CodeInternalError, 1},
		{rcp.CodeUnauthorized, 1},
		{rcp.CodeNotFound, 1},
		{rcp.CodeConflict, 1},
	}
	for _, tc := range cases {
		t.Run(tc.code.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeEngine{}
				f.setStep(failWith(fakeErr{code: tc.code}))
				r := New(f, Options{Retries: 2, FailureThreshold: 100})
				err := search(r)
				if got := r.ErrorCode(err); got != tc.code {
					t.Errorf("code = %v, want %v", got, tc.code)
				}
				if got := f.calls.Load(); got != tc.calls {
					t.Errorf("engine calls = %d, want %d", got, tc.calls)
				}
			})
		})
	}
}

func TestConnectionDeathIsUnavailable(t *testing.T) {
	for _, cause := range []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET} {
		t.Run(cause.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeEngine{}
				f.setStep(failWith(fmt.Errorf("bulk: %w", cause))) // the fake classifies it -32603
				r := New(f, Options{Retries: 1})
				if got := r.ErrorCode(search(r)); got != rcp.CodeBackendUnavailable {
					t.Errorf("code = %v, want BackendUnavailable", got)
				}
				if got := f.calls.Load(); got != 2 {
					t.Errorf("engine calls = %d, want 2 (retried)", got)
				}
			})
		})
	}
}

func TestRetrySucceedsAfterTransientFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{}
		f.setStep(func(_ context.Context, n int64) error {
			if n < 3 {
				return fakeErr{code: rcp.CodeBackendUnavailable}
			}
			return nil
		})
		r := New(f, Options{Retries: 2, BackoffBase: 100 * time.Millisecond, BackoffMax: time.Second})
		start := time.Now()
		if err := search(r); err != nil {
			t.Fatalf("search: %v", err)
		}
		// Full jitter: at most base·2⁰ + base·2¹.
		if el := time.Since(start); el > 300*time.Millisecond {
			t.Errorf("backoff took %v, want ≤ 300ms", el)
		}
		if r.State() != StateClosed {
			t.Errorf("state = %s, want closed", r.State())
		}
	})
}

func TestWritesRetryPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeWriter{}
		f.setStep(failWith(fakeErr{code: rcp.CodeBackendUnavailable}))
		w, ok := New(f, Options{Retries: 2, FailureThreshold: 100}).AsAdapter().(adapters.Writer)
		if !ok {
			t.Fatal("decorated writer does not implement adapters.Writer")
		}
		_ = w.Upsert(context.Background(), []adapters.Document{{ID: "a"}})
		if got := f.calls.Load(); got != 3 {
			t.Errorf("upsert engine calls = %d, want 3 (explicit ids: idempotent)", got)
		}
		f.calls.Store(0)
		if _, err := w.Delete(context.Background(), []string{"a"}); err == nil {
			t.Error("delete: want the engine error")
		}
		if got := f.calls.Load(); got != 1 {
			t.Errorf("delete engine calls = %d, want 1 (never retried)", got)
		}
	})
}

func TestAsAdapterKeepsAbilities(t *testing.T) {
	if _, ok := New(&fakeEngine{}, Options{}).AsAdapter().(adapters.Writer); ok {
		t.Error("a read-only adapter became a Writer")
	}
}

func TestBackoffBoundedByRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{}
		f.setStep(failWith(fakeErr{code: rcp.CodeRateLimited, retryAfter: 10_000}))
		r := New(f, Options{Retries: 5, FailureThreshold: 100})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		_, err := r.Search(ctx, &adapters.Plan{})
		if got := r.ErrorCode(err); got != rcp.CodeRateLimited {
			t.Errorf("code = %v, want RateLimited", got)
		}
		if el := time.Since(start); el != 0 {
			t.Errorf("waited %v for a hint past the deadline, want 0", el)
		}
		if got := f.calls.Load(); got != 1 {
			t.Errorf("engine calls = %d, want 1", got)
		}
	})
}

func TestRetryAfterHintHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{}
		f.setStep(func(_ context.Context, n int64) error {
			if n == 1 {
				return fakeErr{code: rcp.CodeRateLimited, retryAfter: 700}
			}
			return nil
		})
		r := New(f, Options{BackoffBase: time.Millisecond, BackoffMax: 10 * time.Millisecond})
		start := time.Now()
		if err := search(r); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el < 700*time.Millisecond {
			t.Errorf("retried after %v, want ≥ the 700ms hint", el)
		}
	})
}

func TestCancelDuringBackoffStopsRetrying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{}
		f.setStep(failWith(fakeErr{code: rcp.CodeBackendUnavailable, retryAfter: 5000}))
		r := New(f, Options{Retries: 3, FailureThreshold: 100})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		_, _ = r.Search(ctx, &adapters.Plan{})
		if el := time.Since(start); el != time.Second {
			t.Errorf("returned after %v, want 1s (the cancel)", el)
		}
		if got := f.calls.Load(); got != 1 {
			t.Errorf("engine calls = %d, want 1", got)
		}
	})
}

func TestPerCallTimeout(t *testing.T) {
	cases := []struct {
		name      string
		request   time.Duration
		wantCode  rcp.Code
		wantCtx   bool
		wantAfter time.Duration
	}{
		{"engine-side", 10 * time.Second, rcp.CodeTimeout, false, time.Second},
		{"request deadline wins", 200 * time.Millisecond, rcp.CodeTimeout, true, 200 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeEngine{}
				f.setStep(blockUntilDone)
				r := New(f, Options{Timeout: time.Second, Retries: -1})
				ctx, cancel := context.WithTimeout(context.Background(), tc.request)
				defer cancel()
				start := time.Now()
				_, err := r.Search(ctx, &adapters.Plan{})
				if el := time.Since(start); el != tc.wantAfter {
					t.Errorf("returned after %v, want %v", el, tc.wantAfter)
				}
				if got := r.ErrorCode(err); got != tc.wantCode {
					t.Errorf("code = %v, want %v", got, tc.wantCode)
				}
				// An engine-side timeout must not look like the request's own
				// deadline to the Engine's error boundary.
				if got := errors.Is(err, context.DeadlineExceeded); got != tc.wantCtx {
					t.Errorf("errors.Is(DeadlineExceeded) = %v, want %v", got, tc.wantCtx)
				}
			})
		})
	}
}

func TestBreakerTransitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{}
		down := fakeErr{code: rcp.CodeBackendUnavailable}
		f.setStep(failWith(down))
		r := New(f, Options{Retries: -1, FailureThreshold: 3, OpenFor: 5 * time.Second})
		for i := range 3 {
			if s := r.State(); s != StateClosed {
				t.Fatalf("after %d failures state = %s, want closed", i, s)
			}
			_ = search(r)
		}
		if s := r.State(); s != StateOpen {
			t.Fatalf("state = %s, want open", s)
		}
		time.Sleep(2 * time.Second)
		assertOpenError(t, r, search(r), 3000)
		if got := f.calls.Load(); got != 3 {
			t.Errorf("engine calls while open = %d, want 3 (fail fast)", got)
		}
		time.Sleep(3 * time.Second)
		if s := r.State(); s != StateHalfOpen {
			t.Fatalf("state = %s, want half-open", s)
		}
		_ = search(r) // the trial fails: open again for a full period
		assertOpenError(t, r, search(r), 5000)
		time.Sleep(5 * time.Second)
		f.setStep(nil)
		if err := search(r); err != nil {
			t.Fatalf("trial: %v", err)
		}
		if s := r.State(); s != StateClosed {
			t.Errorf("state after a good trial = %s, want closed", s)
		}
	})
}

func assertOpenError(t *testing.T, r *Adapter, err error, wantMs int64) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || r.ErrorCode(err) != rcp.CodeBackendUnavailable {
		t.Fatalf("err = %v, want the breaker's -32010", err)
	}
	if got := e.RetryAfterMs(); got != wantMs {
		t.Errorf("retryAfterMs = %d, want %d (the remaining open time)", got, wantMs)
	}
}

func TestHalfOpenAdmitsOneTrial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{}
		f.setStep(failWith(fakeErr{code: rcp.CodeTimeout}))
		r := New(f, Options{Retries: -1, FailureThreshold: 1, OpenFor: time.Second})
		_ = search(r)
		time.Sleep(time.Second)
		release := make(chan struct{})
		f.setStep(func(context.Context, int64) error { <-release; return nil })
		go func() { _ = search(r) }()
		synctest.Wait() // the trial is in flight
		var e *Error
		if err := search(r); !errors.As(err, &e) || e.Code != rcp.CodeBackendUnavailable {
			t.Errorf("second call during the trial: err = %v, want -32010", err)
		}
		close(release)
		synctest.Wait()
		if s := r.State(); s != StateClosed {
			t.Errorf("state = %s, want closed", s)
		}
	})
}

func TestCallerGivingUpDoesNotTripBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{}
		f.setStep(blockUntilDone)
		r := New(f, Options{Retries: -1, FailureThreshold: 1})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, _ = r.Search(ctx, &adapters.Plan{})
		if s := r.State(); s != StateClosed {
			t.Errorf("state = %s, want closed (the request's deadline is not an engine failure)", s)
		}
	})
}

func TestAbortAnswersInFlightAndNewCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{}
		f.setStep(blockUntilDone)
		r := New(f, Options{Timeout: time.Minute})
		errc := make(chan error, 1)
		go func() { errc <- search(r) }()
		time.Sleep(time.Second)
		r.Abort()
		for _, err := range []error{<-errc, search(r)} {
			if got := r.ErrorCode(err); got != rcp.CodeBackendUnavailable || errors.Is(err, context.Canceled) {
				t.Errorf("err = %v (code %v), want a -32010 that is not a cancel", err, got)
			}
		}
		if got := f.calls.Load(); got != 1 {
			t.Errorf("engine calls = %d, want 1 (no retry after Abort)", got)
		}
	})
}

func TestRunReprobesAndWarnsOnDrift(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		f := &fakeEngine{ev: func(n int64) *capability.Evidence {
			ev := &capability.Evidence{Engine: "fake", DocCount: n}
			if n >= 3 {
				ev.NativeRRF = true // a capability-relevant change
			}
			return ev
		}}
		r := New(f, Options{ReprobeInterval: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		first, err := r.Probe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go r.Run(ctx)
		time.Sleep(45 * time.Second) // probes 2 (same but for DocCount), 3, 4, 5 (drifted)
		cancel()
		synctest.Wait()
		if got := f.calls.Load(); got != 5 {
			t.Errorf("probes = %d, want 5", got)
		}
		if got := strings.Count(logs.String(), "restart to renegotiate"); got != 1 {
			t.Errorf("drift warnings = %d, want 1 (once per distinct change):\n%s", got, logs.String())
		}
		if r.Baseline() != first {
			t.Error("the baseline evidence changed; it must stay the first probe's")
		}
	})
}

func TestRunBacksOffWhileFailing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{}
		f.setStep(failWith(fakeErr{code: rcp.CodeInvalidParams})) // not retried, breaker stays closed
		r := New(f, Options{ReprobeInterval: time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		go r.Run(ctx)
		// Waits 1s, then 2s, 4s, 8s, 8s…: probes at 1, 3, 7, 15, 23.
		time.Sleep(24 * time.Second)
		cancel()
		synctest.Wait()
		if got := f.calls.Load(); got != 5 {
			t.Errorf("probes in 24s = %d, want 5", got)
		}
	})
}

// fakeReranking is a FAKE adapter with a native reranker whose calls
// run the scripted steps like searches.
type fakeReranking struct{ fakeEngine }

func (f *fakeReranking) NativeRerank(ctx context.Context, _ string, passages []string) ([]float64, error) {
	if err := f.run(ctx); err != nil {
		return nil, err
	}
	out := make([]float64, len(passages))
	for i := range out {
		out[i] = float64(i)
	}
	return out, nil
}

// TestNativeRerankForwarded: the decorator forwards a native rerank with
// the read retry policy, and says when the inner adapter has none.
func TestNativeRerankForwarded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeReranking{}
		f.setStep(func(_ context.Context, n int64) error {
			if n < 3 {
				return fakeErr{code: rcp.CodeBackendUnavailable}
			}
			return nil
		})
		r := New(f, Options{Retries: 2, FailureThreshold: 100})
		scores, err := r.NativeRerank(context.Background(), "q", []string{"a", "b"})
		if err != nil || len(scores) != 2 || scores[1] != 1 || f.calls.Load() != 3 {
			t.Errorf("scores %v, err %v, calls %d (want 2 scores after 3 calls)", scores, err, f.calls.Load())
		}
	})
	if _, err := New(&fakeEngine{}, Options{}).NativeRerank(context.Background(), "q", []string{"a"}); !errors.Is(err, adapters.ErrNoNativeRerank) {
		t.Errorf("no native reranker: %v", err)
	}
}

// fakePartial is a FAKE engine answer with failed shards (a node of the
// cluster is gone): classified -32010 like any unavailable shard, but the
// engine answered the request.
type fakePartial struct{ fakeErr }

func (fakePartial) PartialFailure() bool { return true }
func (p fakePartial) Unwrap() error      { return p.fakeErr }

// TestPartialShardFailuresDoNotOpenBreaker: a node is not the backend.
// Answers with failed shards keep their code (and retries) but never open
// the breaker, so fresh first pages of other queries are served; a whole
// request failing still counts.
func TestPartialShardFailuresDoNotOpenBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{}
		partial := fakePartial{fakeErr{code: rcp.CodeBackendUnavailable}}
		f.setStep(failWith(partial))
		r := New(f, Options{Retries: -1, FailureThreshold: 3, OpenFor: 5 * time.Second})
		for range 20 {
			if got := r.ErrorCode(search(r)); got != rcp.CodeBackendUnavailable {
				t.Fatalf("partial answer code = %v, want the adapter's -32010", got)
			}
		}
		if s := r.State(); s != StateClosed {
			t.Fatalf("state after 20 partial answers = %s, want closed", s)
		}
		f.setStep(nil)
		served := 0
		for range 10 {
			if search(r) == nil {
				served++
			}
		}
		if served != 10 {
			t.Errorf("fresh first pages served %d of 10", served)
		}
		f.setStep(failWith(fakeErr{code: rcp.CodeBackendUnavailable}))
		for range 3 {
			_ = search(r)
		}
		if s := r.State(); s != StateOpen {
			t.Errorf("state after 3 whole-request failures = %s, want open", s)
		}
	})
}

// TestProbeLogLines: a probe logs one line naming the engine, its URL and
// the timeout, and a failed probe one warning with the cause; a timeout's
// message names the URL and the timeout once, with no repeated prefix
// (the inner error of a timed-out call is the same deadline again).
func TestProbeLogLines(t *testing.T) {
	cases := []struct {
		name     string
		step     func(context.Context, int64) error
		wantErr  string
		wantWarn bool
	}{
		{"engine up", nil, "", false},
		{"blackholed", func(ctx context.Context, _ int64) error {
			<-ctx.Done()
			return fmt.Errorf("get http://es:9200/docs: %w", context.Cause(ctx)) // what an HTTP client returns
		}, "resilient: no answer from elasticsearch at http://es:9200 within 2s", true},
		{"refused", failWith(errors.New("dial tcp es:9200: connect: connection refused")),
			"dial tcp es:9200: connect: connection refused", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs bytes.Buffer
				f := &fakeEngine{}
				f.setStep(tc.step)
				r := New(f, Options{Name: "docs", Engine: "elasticsearch", Endpoint: "http://es:9200", Timeout: 2 * time.Second,
					Retries: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				_, err := r.Probe(context.Background())
				if got := fmt.Sprint(err); tc.wantErr == "" && err != nil || tc.wantErr != "" && got != tc.wantErr {
					t.Errorf("err = %q, want %q", got, tc.wantErr)
				}
				lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
				probing, failed := 0, 0
				for _, l := range lines {
					switch {
					case strings.Contains(l, `msg="probing engine"`):
						probing++
						if !strings.Contains(l, "engine=elasticsearch url=http://es:9200 timeout=2s") {
							t.Errorf("probe line lacks engine, url or timeout: %s", l)
						}
					case strings.Contains(l, `msg="probe failed"`):
						failed++
						if !strings.Contains(l, "url=http://es:9200") || !strings.Contains(l, tc.wantErr) {
							t.Errorf("failure line lacks url or cause %q: %s", tc.wantErr, l)
						}
					}
					if strings.Count(l, "resilient:") > 1 || strings.Count(l, "within") > 1 {
						t.Errorf("repeated prefix: %s", l)
					}
				}
				if probing != 1 || failed != map[bool]int{true: 1}[tc.wantWarn] {
					t.Errorf("probing lines = %d, failure lines = %d, want 1 and %v:\n%s", probing, failed, tc.wantWarn, logs.String())
				}
			})
		})
	}
}

// TestRefusingFollowsBreaker: the decorator's Refusing (adapters.Refuser)
// is nil while the breaker admits, and while it is open the same -32010
// a search gets, with the time left as its hint.
func TestRefusingFollowsBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{}
		f.setStep(failWith(fakeErr{code: rcp.CodeBackendUnavailable}))
		r := New(f, Options{Retries: -1, FailureThreshold: 1, OpenFor: 5 * time.Second})
		var rf adapters.Refuser = r.AsAdapter().(adapters.Refuser)
		if err := rf.Refusing(); err != nil {
			t.Fatalf("closed breaker: Refusing = %v", err)
		}
		_ = search(r)
		time.Sleep(time.Second)
		assertOpenError(t, r, rf.Refusing(), 4000)
		time.Sleep(4 * time.Second)
		if err := rf.Refusing(); err != nil {
			t.Fatalf("half-open breaker: Refusing = %v", err)
		}
	})
}
