package telemetry_test

import (
	"context"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// TestObserverCountsEveryRequest: with the Observer on the server, the
// requests the server answers itself (lifecycle methods, gating errors)
// are counted by method and code and get a span, and a retrieve through
// the Backend decorator is counted, spanned and logged once, its stage
// spans under its request span.
func TestObserverCountsEveryRequest(t *testing.T) {
	s := newStack(t, stackOpts{})
	c := rcptest.NewClientOptions(t, s.backend, server.Options{Observe: s.tel.Observer(engineName)})
	ctx := context.Background()
	calls := []struct {
		method string
		params map[string]any
		want   rcp.Code // 0: a result
	}{
		{rcp.MethodRetrieve, map[string]any{"query": "zebra"}, rcp.CodeNotInitialized},
		{rcp.MethodInitialize, map[string]any{"protocolVersion": 1}, 0},
		{rcp.MethodPing, map[string]any{}, 0},
		{"no/such", map[string]any{}, rcp.CodeUnknownMethod},
		{rcp.MethodRerank, map[string]any{}, rcp.CodeCapabilityMissing},
		{rcp.MethodRetrieve, map[string]any{"query": "zebra", "k": 2, "mode": "sparse"}, 0},
		{rcp.MethodInfo, map[string]any{}, 0},
	}
	for _, tc := range calls {
		_, err := c.Call(ctx, tc.method, tc.params)
		if got := errCode(err); got != tc.want {
			t.Fatalf("%s: code %d, want %d", tc.method, got, tc.want)
		}
	}
	fams := scrape(t, s)
	for _, tc := range []struct{ method, code string }{
		{"retrieve", "-32001"}, {"initialize", "ok"}, {"ping", "ok"}, {"other", "-32004"},
		{"rerank", "-32003"}, {"retrieve", "ok"}, {"info", "ok"},
	} {
		labels := map[string]string{"method": tc.method, "code": tc.code, "engine": engineName}
		if got, ok := value(fams, "rcp_requests_total", labels); !ok || got != 1 {
			t.Errorf("rcp_requests_total%v = %v (found %v), want 1", labels, got, ok)
		}
	}
	if got, _ := value(fams, "rcp_request_duration_seconds", map[string]string{"method": "retrieve", "engine": engineName}); got != 2 {
		t.Errorf("retrieve latency samples = %v, want 2 (one per request)", got)
	}
	spans := byName(s.rec.Ended())
	for _, name := range []string{"rcp initialize", "rcp ping", "rcp other", "rcp rerank", "rcp info"} {
		one(t, spans, name)
	}
	if n := len(spans["rcp retrieve"]); n != 2 {
		t.Fatalf("%d retrieve spans, want 2 (one per request): %v", n, names(spans))
	}
	served := spans["rcp retrieve"][1]
	wantChild(t, served, one(t, spans, "recall sparse"))
	wantChild(t, one(t, spans, "recall sparse"), one(t, spans, "engine search"))
	if n := len(s.logs.requestLines(t)); n != len(calls) {
		t.Errorf("%d request log lines, want %d", n, len(calls))
	}
}

func errCode(err *rcp.Error) rcp.Code {
	if err == nil {
		return 0
	}
	return err.Code
}
