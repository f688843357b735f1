// Package resilient decorates an adapters.Adapter for production use: a
// per-call deadline on every engine call (never longer than the
// request's), retries with exponential backoff and full jitter for
// idempotent calls that failed with a retryable engine error (§12.2), a
// circuit breaker per engine that answers -32010 with retryAfterMs while
// open, and a periodic re-probe (Run) that watches for capability drift
// without ever changing an open session's capability set (§13.2).
package resilient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	retrypkg "github.com/rcp-sidecar/rcp-sidecar/retry"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultTimeout          = 5 * time.Second
	DefaultWriteTimeout     = 30 * time.Second
	DefaultRetries          = 2
	DefaultBackoffBase      = 50 * time.Millisecond
	DefaultBackoffMax       = time.Second
	DefaultFailureThreshold = 5
	DefaultOpenFor          = 5 * time.Second
	DefaultReprobeInterval  = 30 * time.Second
)

// Options configure the decorator. Zero values select the defaults above.
type Options struct {
	// Name labels log lines (the backend name).
	Name string
	// Engine and Endpoint name the engine kind ("elasticsearch") and where
	// it is reached (its URL, without credentials) in the probe log lines
	// and in the error of a call that timed out; either may be empty.
	Engine, Endpoint string
	// Timeout bounds one Search or Probe attempt; WriteTimeout one Upsert
	// or Delete attempt. The request's own deadline always wins when it is
	// sooner (§13.1).
	Timeout, WriteTimeout time.Duration
	// Retries is how many times an idempotent call (Search, Probe, Upsert
	// with its explicit ids, §7.10) is retried after a retryable engine
	// error; negative disables retries. Delete is never retried: its count
	// of removed documents would be wrong on a repeat (§7.11).
	Retries int
	// BackoffBase and BackoffMax shape the full-jitter backoff: attempt n
	// waits a uniform random time in [0, min(BackoffMax, BackoffBase·2ⁿ)],
	// or longer when the engine sent a retry hint.
	BackoffBase, BackoffMax time.Duration
	// FailureThreshold consecutive retryable failures open the breaker
	// for OpenFor; then one half-open trial call closes or re-opens it.
	FailureThreshold int
	OpenFor          time.Duration
	// ReprobeInterval is the period of Run's re-probe; failures back off
	// up to 8× the interval.
	ReprobeInterval time.Duration
	// Logger receives retries, breaker transitions and drift warnings.
	Logger *slog.Logger
	// Notes, when set, are added to the notes of every Search answer (the
	// backend's health while it is not green). It must not wait on the
	// engine.
	Notes func() []string
}

// Effective returns o with the defaults New applies to its zero fields.
func (o Options) Effective() Options { return o.withDefaults() }

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Timeout, DefaultTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.BackoffBase, DefaultBackoffBase)
	def(&o.BackoffMax, DefaultBackoffMax)
	def(&o.OpenFor, DefaultOpenFor)
	def(&o.ReprobeInterval, DefaultReprobeInterval)
	switch {
	case o.Retries == 0:
		o.Retries = DefaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.FailureThreshold <= 0 {
		o.FailureThreshold = DefaultFailureThreshold
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Adapter is the resilient decorator. Pass AsAdapter() to
// retrieval.NewEngine; keep the *Adapter for Run, State and Abort.
type Adapter struct {
	inner adapters.Adapter
	opts  Options
	br    *retrypkg.Breaker
	log   *slog.Logger

	stopCtx context.Context
	stop    context.CancelCauseFunc

	mu       sync.Mutex
	baseline *capability.Evidence // the first successful probe
	drifted  *capability.Evidence // the last drift already warned about
}

// New decorates a.
func New(a adapters.Adapter, opts Options) *Adapter {
	opts = opts.withDefaults()
	r := &Adapter{inner: a, opts: opts, br: retrypkg.NewBreaker(opts.FailureThreshold, opts.OpenFor)}
	r.log = opts.Logger.With("component", "resilience")
	r.stopCtx, r.stop = context.WithCancelCause(context.Background())
	return r
}

// AsAdapter returns the decorated adapter: r itself, or r plus Upsert and
// Delete when the inner adapter is an adapters.Writer (so the Engine sees
// exactly the inner adapter's abilities).
func (r *Adapter) AsAdapter() adapters.Adapter {
	if w, ok := r.inner.(adapters.Writer); ok {
		return &writer{Adapter: r, w: w}
	}
	return r
}

// Refusing implements adapters.Refuser: the -32010 a call would get now
// from the open breaker (with the time left as its retry hint), or nil.
func (r *Adapter) Refusing() error {
	if wait, ok := r.br.Refusing(); ok {
		return &Error{Code: rcp.CodeBackendUnavailable, RetryAfter: wait, msg: "circuit open"}
	}
	return nil
}

// State is the breaker state: "closed", "open" or "half-open".
func (r *Adapter) State() string { return r.br.State() }

// Abort ends every engine call in flight and refuses new ones with -32010:
// the end of a graceful shutdown's grace period.
func (r *Adapter) Abort() { r.stop(errShutdown) }

// Baseline returns the evidence of the first successful probe, or nil.
func (r *Adapter) Baseline() *capability.Evidence {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.baseline
}

// Probe implements adapters.Adapter: idempotent, so retried. Each probe
// logs one line naming the engine, its endpoint and the per-attempt
// timeout (info until the first success, debug for re-probes after it),
// and each failed probe one warning with its cause.
func (r *Adapter) Probe(ctx context.Context) (*capability.Evidence, error) {
	level := slog.LevelInfo
	if r.Baseline() != nil {
		level = slogDebug
	}
	where := []slog.Attr{slog.String("backend", r.opts.Name), slog.String("engine", r.opts.Engine)}
	if r.opts.Endpoint != "" {
		where = append(where, slog.String("url", r.opts.Endpoint))
	}
	r.log.LogAttrs(ctx, level, "probing engine", append(where, slog.Duration("timeout", r.opts.Timeout))...)
	var ev *capability.Evidence
	err := r.do(ctx, "probe", r.opts.Timeout, true, func(ctx context.Context) (err error) {
		ev, err = r.inner.Probe(ctx)
		return err
	})
	if err != nil {
		if ctx.Err() == nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "probe failed", append(where, slog.String("err", err.Error()))...)
		}
		return nil, err
	}
	r.observe(ev)
	return ev, nil
}

// Plan implements adapters.Adapter (no I/O: passed through).
func (r *Adapter) Plan(req *adapters.SearchRequest) (*adapters.Plan, error) { return r.inner.Plan(req) }

// Search implements adapters.Adapter: a read, so retried.
func (r *Adapter) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	var c *adapters.Candidates
	err := r.do(ctx, "search", r.opts.Timeout, true, func(ctx context.Context) (err error) {
		c, err = r.inner.Search(ctx, p)
		return err
	})
	if err == nil && c != nil && r.opts.Notes != nil {
		for _, n := range r.opts.Notes() {
			if !slices.Contains(c.Notes, n) {
				c.Notes = append(slices.Clip(c.Notes), n)
			}
		}
	}
	return c, err
}

// ErrorCode implements adapters.Adapter: the decorator's own errors carry
// their code; the rest are classified by the inner adapter, except that a
// connection that died mid-call (EOF, reset, broken pipe), when the inner
// adapter cannot classify it, is -32010: the engine went away (§13.1).
func (r *Adapter) ErrorCode(err error) rcp.Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	code := r.inner.ErrorCode(err)
	if code == rcp.CodeInternalError && connectionDied(err) {
		return rcp.CodeBackendUnavailable
	}
	return code
}

func connectionDied(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Close aborts calls in flight and closes the inner adapter.
func (r *Adapter) Close() error {
	r.Abort()
	return r.inner.Close()
}

// writer adds the Writer methods when the inner adapter has them.
type writer struct {
	*Adapter
	w adapters.Writer
}

// Upsert implements adapters.Writer. Every document carries its id (the
// Engine assigns missing ones before calling), so a repeat replaces
// rather than duplicates (§7.10) and the call is retried like a read.
func (w *writer) Upsert(ctx context.Context, docs []adapters.Document) error {
	return w.do(ctx, "upsert", w.opts.WriteTimeout, true, func(ctx context.Context) error {
		return w.w.Upsert(ctx, docs)
	})
}

// Delete implements adapters.Writer. Never retried: a repeat would report
// 0 deleted for documents the first attempt removed (§7.11).
func (w *writer) Delete(ctx context.Context, ids []string) (int, error) {
	var n int
	err := w.do(ctx, "delete", w.opts.WriteTimeout, false, func(ctx context.Context) (err error) {
		n, err = w.w.Delete(ctx, ids)
		return err
	})
	return n, err
}

// Release implements adapters.Releaser: it forwards to the inner adapter
// within Options.Timeout (the Engine calls it without the request's
// deadline), once, never retried; adapters.ErrNoRelease when the inner
// adapter keeps no continuations.
func (r *Adapter) Release(ctx context.Context, next json.RawMessage) error {
	rel, ok := r.inner.(adapters.Releaser)
	if !ok {
		return adapters.ErrNoRelease
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	return rel.Release(ctx, next)
}

// NativeRerank implements adapters.NativeReranker: it forwards to the
// inner adapter like Search (per-attempt timeout, retries, breaker; a
// rerank only reads); adapters.ErrNoNativeRerank when the inner adapter
// has no native reranker.
func (r *Adapter) NativeRerank(ctx context.Context, query string, passages []string) ([]float64, error) {
	nr, ok := r.inner.(adapters.NativeReranker)
	if !ok {
		return nil, adapters.ErrNoNativeRerank
	}
	var scores []float64
	err := r.do(ctx, "rerank", r.opts.Timeout, true, func(ctx context.Context) (err error) {
		scores, err = nr.NativeRerank(ctx, query, passages)
		return err
	})
	return scores, err
}

var (
	_ adapters.NativeReranker = (*Adapter)(nil)
	_ adapters.Adapter        = (*Adapter)(nil)
	_ adapters.Writer         = (*writer)(nil)
	_ adapters.Releaser       = (*Adapter)(nil)
)
