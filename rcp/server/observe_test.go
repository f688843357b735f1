package server_test

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

type observedKey struct{}

// observation is one Options.Observe completion.
type observation struct {
	method string
	code   rcp.Code // 0: a result
}

func TestObserveSeesEveryAnsweredRequest(t *testing.T) {
	var mu sync.Mutex
	var got []observation
	b := rcptest.NewStubBackend(1)
	var sawCtx bool
	b.RetrieveFunc = func(ctx context.Context, _ *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
		sawCtx = ctx.Value(observedKey{}) == "yes"
		return &rcp.RetrieveResult{Hits: []rcp.Hit{}}, nil
	}
	opts := server.Options{Observe: func(ctx context.Context, method string, _ json.RawMessage) (context.Context, func(error)) {
		return context.WithValue(ctx, observedKey{}, "yes"), func(err error) {
			o := observation{method: method}
			if err != nil {
				o.code = rcp.AsError(err).Code
			}
			mu.Lock()
			got = append(got, o)
			mu.Unlock()
		}
	}}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"q"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"no/such","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"rerank","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`,
		`{"jsonrpc":"2.0","id":6,"method":"retrieve","params":{"query":"q"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"shutdown","params":{}}`,
	}, "\n") + "\n"
	var out strings.Builder
	if err := server.New(b, opts).ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := []observation{
		{method: "initialize"}, {method: "no/such", code: rcp.CodeUnknownMethod},
		{method: "ping"}, {method: "rerank", code: rcp.CodeCapabilityMissing},
		{method: "retrieve", code: rcp.CodeNotInitialized}, {method: "retrieve"}, {method: "shutdown"},
	}
	order := func(a, b observation) int {
		return cmp.Or(strings.Compare(a.method, b.method), cmp.Compare(a.code, b.code))
	}
	slices.SortFunc(got, order)
	slices.SortFunc(want, order)
	if !slices.Equal(got, want) {
		t.Errorf("observed %+v, want %+v", got, want)
	}
	if !sawCtx {
		t.Error("the backend did not run under Observe's context")
	}
}
