package memory_test

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/adaptertest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// harness builds a fresh writable memory.Store per call; there is nothing
// external to clean up.
type harness struct{}

func newHarness(context.Context, testing.TB) (adaptertest.Harness, error) { return harness{}, nil }

// MakeAdapter loads the schema's corpus, vectors included.
func (harness) MakeAdapter(_ context.Context, s adaptertest.Schema) (adapters.Adapter, error) {
	return newStore(s), nil
}

func newStore(s adaptertest.Schema) *memory.Store {
	st := memory.New(memory.Options{Similarity: s.Vector.Similarity, Dims: s.Vector.Dims,
		TitleField: s.TitleField, Fields: s.FieldTypes(), Writable: true})
	st.Add(s.Documents()...)
	return st
}

// Unreachable returns fakeLostBackend: an in-process store cannot be
// unreachable, so this exercises the Engine's lost-backend path instead.
func (harness) Unreachable(context.Context) (adapters.Adapter, error) {
	return fakeLostBackend{newStore(adaptertest.DefaultSchema())}, nil
}

func (harness) Close() {}

// fakeLostBackend is a FAKE: a memory store whose probe succeeds but whose
// every search fails as if the engine refused the connection, the way a
// backend lost after startup looks (§13.2).
type fakeLostBackend struct{ *memory.Store }

var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}

// Search always fails with a refused connection.
func (fakeLostBackend) Search(context.Context, *adapters.Plan) (*adapters.Candidates, error) {
	return nil, errRefused
}

// ErrorCode classifies a refused connection as -32010.
func (f fakeLostBackend) ErrorCode(err error) rcp.Code {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return rcp.CodeBackendUnavailable
	}
	return f.Store.ErrorCode(err)
}

func TestConformance(t *testing.T) {
	adaptertest.RunConformanceTests(t, newHarness)
}

func BenchmarkConformance(b *testing.B) {
	adaptertest.RunBenchmarks(b, newHarness)
}
