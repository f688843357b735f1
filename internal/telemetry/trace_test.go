package telemetry_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// TestRetrieveSpanTree: a hybrid retrieve with MMR and a token budget,
// through the real server over the memory engine, yields one server span
// "rcp retrieve" with a child per stage, and each engine call as a child
// of the stage that made it.
func TestRetrieveSpanTree(t *testing.T) {
	s := newStack(t, stackOpts{})
	raw, err := s.client(t).Call(context.Background(), rcp.MethodRetrieve, map[string]any{
		"query": secretQuery, "k": 2, "mode": "hybrid", "mmr": map[string]any{"lambda": 0.5}, "tokenBudget": 1000})
	if err != nil {
		t.Fatal(err)
	}
	spans := byName(s.rec.Ended())
	root := one(t, spans, "rcp retrieve")
	if root.Parent().IsValid() || root.SpanKind() != trace.SpanKindServer {
		t.Errorf("rcp retrieve: parent %v kind %v, want a server root", root.Parent(), root.SpanKind())
	}
	wantAttr(t, root, "rcp.method", "retrieve")
	wantAttr(t, root, "rcp.engine", engineName)
	for _, name := range []string{"recall sparse", "recall dense", "fuse", "mmr", "pack"} {
		wantChild(t, root, one(t, spans, name))
	}
	wantChild(t, one(t, spans, "recall dense"), one(t, spans, "embed"))
	searches := spans["engine search"]
	if len(searches) != 2 {
		t.Fatalf("engine search spans: %d, want 2", len(searches))
	}
	parents := map[trace.SpanID]bool{}
	for _, es := range searches {
		parents[es.Parent().SpanID()] = true
		wantAttr(t, es, "rcp.engine", engineName)
	}
	for _, name := range []string{"recall sparse", "recall dense"} {
		if !parents[one(t, spans, name).SpanContext().SpanID()] {
			t.Errorf("no engine search under %q", name)
		}
	}
	var res struct {
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if got, want := res.Meta["traceId"], root.SpanContext().TraceID().String(); got != want {
		t.Errorf("_meta.traceId = %v, want %s (§17.2)", got, want)
	}
}

// TestErrorSpan: a failed engine call marks the request span with the
// §12 code the client got, and the engine span with the adapter's
// classification.
func TestErrorSpan(t *testing.T) {
	s := newStack(t, stackOpts{wrap: failWith(rcp.CodeBackendUnavailable)})
	_, err := s.client(t).Call(context.Background(), rcp.MethodRetrieve, map[string]any{"query": "zebra", "k": 2, "mode": "sparse"})
	if err == nil || err.Code != rcp.CodeBackendUnavailable {
		t.Fatalf("err = %v, want -32010", err)
	}
	spans := byName(s.rec.Ended())
	for _, name := range []string{"rcp retrieve", "engine search"} {
		sp := one(t, spans, name)
		wantIntAttr(t, sp, "rcp.code", int64(rcp.CodeBackendUnavailable))
		if sp.Status().Code.String() != "Error" {
			t.Errorf("%s status %v, want Error", name, sp.Status())
		}
		if strings.Contains(sp.Status().Description, secretQuery) {
			t.Errorf("%s status leaks the engine's error text", name)
		}
	}
}

// TestTraceparentFromMeta: _meta.traceparent in the params becomes the
// request span's remote parent (same trace id, parent span id).
func TestTraceparentFromMeta(t *testing.T) {
	s := newStack(t, stackOpts{})
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	_, err := s.client(t).Call(context.Background(), rcp.MethodRetrieve, map[string]any{
		"query": "zebra", "k": 2, "mode": "sparse", "_meta": map[string]any{"traceparent": tp}})
	if err != nil {
		t.Fatal(err)
	}
	root := one(t, byName(s.rec.Ended()), "rcp retrieve")
	wantParent(t, root, "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
}

// TestTraceparentHeader: over HTTP the traceparent header is honoured,
// and wins over _meta.traceparent when both are present; X-Request-Id is
// echoed and lands on the request log line.
func TestTraceparentHeader(t *testing.T) {
	const (
		hdrTrace, hdrSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
		metaTP            = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	)
	tests := []struct {
		name string
		meta map[string]any
	}{
		{"header only", nil},
		{"header and _meta", map[string]any{"traceparent": metaTP}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t, stackOpts{})
			ts := httptest.NewServer(s.tel.Middleware(server.New(s.backend, server.Options{BasePath: "/rcp"}).Handler()))
			defer ts.Close()
			params := map[string]any{"query": "zebra", "k": 2, "mode": "sparse", "_meta": tc.meta}
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "retrieve", "params": params})
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/rcp/retrieve", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("traceparent", "00-"+hdrTrace+"-"+hdrSpan+"-01")
			req.Header.Set("X-Request-Id", "req-42")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("X-Request-Id"); got != "req-42" {
				t.Errorf("X-Request-Id echoed %q", got)
			}
			wantParent(t, one(t, byName(s.rec.Ended()), "rcp retrieve"), hdrTrace, hdrSpan)
			lines := s.logs.requestLines(t)
			if len(lines) != 1 || lines[0]["request_id"] != "req-42" || lines[0]["trace_id"] != hdrTrace {
				t.Errorf("request log lines %v, want one with request_id req-42 and trace_id %s", lines, hdrTrace)
			}
		})
	}
}

func failWith(code rcp.Code) func(a adapters.Adapter) adapters.Adapter {
	return func(a adapters.Adapter) adapters.Adapter { return failing{Adapter: a, code: code} }
}

func one(t *testing.T, spans map[string][]sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	if len(spans[name]) != 1 {
		t.Fatalf("%d spans named %q, want 1 (have %v)", len(spans[name]), name, names(spans))
	}
	return spans[name][0]
}

func names(spans map[string][]sdktrace.ReadOnlySpan) []string {
	var out []string
	for n := range spans {
		out = append(out, n)
	}
	return out
}

func wantChild(t *testing.T, parent, child sdktrace.ReadOnlySpan) {
	t.Helper()
	if child.Parent().SpanID() != parent.SpanContext().SpanID() || child.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("%q is not a child of %q", child.Name(), parent.Name())
	}
}

func wantParent(t *testing.T, sp sdktrace.ReadOnlySpan, traceID, spanID string) {
	t.Helper()
	if got := sp.SpanContext().TraceID().String(); got != traceID {
		t.Errorf("%s trace id %s, want %s", sp.Name(), got, traceID)
	}
	if got := sp.Parent().SpanID().String(); got != spanID || !sp.Parent().IsRemote() {
		t.Errorf("%s parent %s (remote %v), want remote %s", sp.Name(), got, sp.Parent().IsRemote(), spanID)
	}
}

func wantAttr(t *testing.T, sp sdktrace.ReadOnlySpan, key, want string) {
	t.Helper()
	for _, kv := range sp.Attributes() {
		if string(kv.Key) == key {
			if got := kv.Value.Emit(); got != want {
				t.Errorf("%s %s = %q, want %q", sp.Name(), key, got, want)
			}
			return
		}
	}
	t.Errorf("%s has no attribute %s", sp.Name(), key)
}

func wantIntAttr(t *testing.T, sp sdktrace.ReadOnlySpan, key string, want int64) {
	t.Helper()
	for _, kv := range sp.Attributes() {
		if string(kv.Key) == key {
			if got := kv.Value.AsInt64(); got != want {
				t.Errorf("%s %s = %d, want %d", sp.Name(), key, got, want)
			}
			return
		}
	}
	t.Errorf("%s has no attribute %s", sp.Name(), key)
}
