package sidecar

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/elasticsearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/opensearch"
	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/telemetry"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

// TestEngineSpansLive opens a backend on a real Elasticsearch (and
// OpenSearch) index through openBackend, as serve does, with spans
// recorded in memory, and checks the database attributes of its engine
// spans against the engine's own address and index: a probe and a search
// that succeed, then a search on the deleted index that fails with an
// error.type matching the adapter's classification.
func TestEngineSpansLive(t *testing.T) {
	for _, e := range itest.SearchEngines(t) {
		t.Run(e.Name, func(t *testing.T) {
			index := itest.UniqueName("rcp-spans")
			itest.CreateIndex(t, e.URL, index, `{"mappings":{"properties":{"text":{"type":"text"}}}}`)
			if st, out := itest.EngineDo(t, e.URL, http.MethodPut, "/"+index+"/_doc/d1?refresh=true", `{"text":"comets grow tails"}`); st/100 != 2 {
				t.Fatalf("index a document: HTTP %d %s", st, out)
			}
			b := &config.Backend{Name: "docs", Engine: e.Name, Policy: config.DefaultPolicy()}
			switch e.Name {
			case "elasticsearch":
				c := elasticsearch.Factory.NewConfig().(*elasticsearch.Config)
				c.URLs, c.Index = []string{e.URL}, index
				b.Config = c
			case "opensearch":
				c := opensearch.Factory.NewConfig().(*opensearch.Config)
				c.URLs, c.Index = []string{e.URL}, index
				b.Config = c
			}
			rec := tracetest.NewSpanRecorder()
			tel, err := telemetry.New(context.Background(), telemetry.Options{SpanProcessor: rec})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
			a := &Sidecar{cfg: &config.Config{}, log: slog.New(slog.DiscardHandler)}
			a.obs.once.Do(func() { a.obs.t = tel })
			op, err := openBackend(context.Background(), b, openOptions{log: a.log, obs: a, resilient: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(op.Close)
			c := rcptest.NewClient(t, op.engine)
			if _, err := c.Initialize(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Call(context.Background(), rcp.MethodRetrieve, map[string]any{"query": "comets", "k": 1, "mode": "sparse"}); err != nil {
				t.Fatal(err)
			}

			u, err := url.Parse(e.URL)
			if err != nil {
				t.Fatal(err)
			}
			port := u.Port()
			if port == "" {
				port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
			}
			want := map[string]string{"db.system.name": e.Name, "db.collection.name": index,
				"server.address": u.Hostname(), "server.port": port, "rcp.engine": "docs"}
			probe := lastSpan(t, rec.Ended(), "engine probe")
			search := lastSpan(t, rec.Ended(), "engine search")
			for k, v := range want {
				if got := attrs(probe)[k]; got != v {
					t.Errorf("engine probe %s = %q, want %q", k, got, v)
				}
				if got := attrs(search)[k]; got != v {
					t.Errorf("engine search %s = %q, want %q", k, got, v)
				}
			}
			if got := attrs(search)["db.operation.name"]; got != "search" {
				t.Errorf("engine search db.operation.name = %q, want search", got)
			}
			if _, ok := attrs(search)["error.type"]; ok {
				t.Error("a successful search has error.type")
			}

			if st, out := itest.EngineDo(t, e.URL, http.MethodDelete, "/"+index, ""); st/100 != 2 {
				t.Fatalf("delete %s: HTTP %d %s", index, st, out)
			}
			rec.Reset()
			if _, err := c.Call(context.Background(), rcp.MethodRetrieve, map[string]any{"query": "comets", "k": 1, "mode": "sparse"}); err == nil {
				t.Fatal("retrieve on a deleted index succeeded")
			}
			failed := lastSpan(t, rec.Ended(), "engine search")
			code, err := strconv.Atoi(attrs(failed)["rcp.code"])
			if err != nil {
				t.Fatalf("failed engine search has no rcp.code: %v", attrs(failed))
			}
			if got, want := attrs(failed)["error.type"], rcp.Code(code).String(); got != want || !rcp.Code(code).Valid() {
				t.Errorf("failed engine search error.type = %q, want %q (rcp.code %d)", got, want, code)
			}
		})
	}
}

// lastSpan is the last ended span named name.
func lastSpan(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for i := len(spans) - 1; i >= 0; i-- {
		if spans[i].Name() == name {
			return spans[i]
		}
	}
	t.Fatalf("no span named %q", name)
	return nil
}

// attrs are a span's attributes in their emitted form.
func attrs(sp sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, kv := range sp.Attributes() {
		out[string(kv.Key)] = kv.Value.Emit()
	}
	return out
}
