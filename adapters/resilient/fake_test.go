package resilient

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// fakeEngine is a FAKE adapter (no engine behind it): every call runs the
// scripted step function, and calls are counted.
type fakeEngine struct {
	calls atomic.Int64
	mu    sync.Mutex
	step  func(ctx context.Context, n int64) error
	ev    func(n int64) *capability.Evidence
}

// fakeErr is a scripted engine failure classified as code.
type fakeErr struct {
	code       rcp.Code
	retryAfter int64
}

func (e fakeErr) Error() string       { return "fake engine error " + e.code.String() }
func (e fakeErr) RetryAfterMs() int64 { return e.retryAfter }

func (f *fakeEngine) run(ctx context.Context) error {
	n := f.calls.Add(1)
	f.mu.Lock()
	step := f.step
	f.mu.Unlock()
	if step == nil {
		return nil
	}
	return step(ctx, n)
}

func (f *fakeEngine) setStep(s func(ctx context.Context, n int64) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.step = s
}

func (f *fakeEngine) Probe(ctx context.Context) (*capability.Evidence, error) {
	if err := f.run(ctx); err != nil {
		return nil, err
	}
	if f.ev != nil {
		return f.ev(f.calls.Load()), nil
	}
	return &capability.Evidence{Engine: "fake", Target: "t"}, nil
}

func (f *fakeEngine) Plan(*adapters.SearchRequest) (*adapters.Plan, error) {
	return &adapters.Plan{}, nil
}

func (f *fakeEngine) Search(ctx context.Context, _ *adapters.Plan) (*adapters.Candidates, error) {
	if err := f.run(ctx); err != nil {
		return nil, err
	}
	return &adapters.Candidates{Total: -1}, nil
}

func (f *fakeEngine) ErrorCode(err error) rcp.Code {
	var fe fakeErr
	switch {
	case errors.As(err, &fe):
		return fe.code
	case errors.Is(err, context.DeadlineExceeded):
		return rcp.CodeTimeout
	case errors.Is(err, context.Canceled):
		return rcp.CodeCancelled
	}
	return rcp.CodeInternalError
}

func (f *fakeEngine) Close() error { return nil }

// fakeWriter is a FAKE writable adapter.
type fakeWriter struct{ fakeEngine }

func (f *fakeWriter) Upsert(ctx context.Context, _ []adapters.Document) error { return f.run(ctx) }

func (f *fakeWriter) Delete(ctx context.Context, ids []string) (int, error) {
	if err := f.run(ctx); err != nil {
		return 0, err
	}
	return len(ids), nil
}

// failWith returns a step failing every call with err.
func failWith(err error) func(context.Context, int64) error {
	return func(context.Context, int64) error { return err }
}

// blockUntilDone returns a step that hangs until its context ends.
func blockUntilDone(ctx context.Context, _ int64) error {
	<-ctx.Done()
	return ctx.Err()
}
