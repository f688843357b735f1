package telemetry_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/elasticsearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/opensearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/internal/telemetry"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// spanAttrs returns sp's attributes by key, in their emitted form.
func spanAttrs(sp sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, kv := range sp.Attributes() {
		out[string(kv.Key)] = kv.Value.Emit()
	}
	return out
}

// dbKeys are the attribute names OpenTelemetry's database and general
// conventions define (semconv 1.43, "Database spans"; "error.type" and
// "server.*" from the general attributes), written out here rather than
// taken from the semconv package the code uses.
var dbKeys = []string{"db.system.name", "db.operation.name", "db.collection.name", "server.address", "server.port", "error.type"}

// qdrantTenantIndices is what a Qdrant backend whose tenants have
// collections of their own describes: no configured collection, since a
// write's collection is then the tenant's (the caller clears it).
func qdrantTenantIndices() adapters.Endpoint {
	ep := (&qdrant.Config{Address: "10.0.0.7:6334", Collection: "shared"}).Endpoint()
	ep.Collection = ""
	return ep
}

// TestEngineSpanDBAttributes drives a retrieve, an index/add and an
// index/delete through the real server, Engine and memory engine, with
// the engine decorator told it fronts each kind of engine (the Endpoint
// that engine's Config describes), and reads the
// in-memory exporter: every engine span carries the database attributes
// the conventions define for it next to the rcp.* ones, and a memory
// engine's spans carry none of them.
func TestEngineSpanDBAttributes(t *testing.T) {
	tests := []struct {
		name string
		ep   adapters.Endpoint
		// want maps span name → the database attributes it must carry
		// (exactly: any other db.*/server.*/error.type key is an error).
		want map[string]map[string]string
	}{
		{"elasticsearch single node", (&elasticsearch.Config{URLs: []string{"http://es.internal:9200"}, Index: "docs"}).Endpoint(),
			map[string]map[string]string{
				"engine search": {"db.system.name": "elasticsearch", "db.operation.name": "search", "db.collection.name": "memory", "server.address": "es.internal", "server.port": "9200"},
				"engine upsert": {"db.system.name": "elasticsearch", "db.operation.name": "bulk", "db.collection.name": "docs", "server.address": "es.internal", "server.port": "9200"},
				"engine delete": {"db.system.name": "elasticsearch", "db.operation.name": "bulk", "db.collection.name": "docs", "server.address": "es.internal", "server.port": "9200"},
			}},
		{"opensearch behind several nodes", (&opensearch.Config{URLs: []string{"http://os-0:9200", "http://os-1:9200"}, Index: "docs"}).Endpoint(),
			map[string]map[string]string{
				"engine search": {"db.system.name": "opensearch", "db.operation.name": "search", "db.collection.name": "memory"},
				"engine upsert": {"db.system.name": "opensearch", "db.operation.name": "bulk", "db.collection.name": "docs"},
				"engine delete": {"db.system.name": "opensearch", "db.operation.name": "bulk", "db.collection.name": "docs"},
			}},
		{"qdrant with tenant indices", qdrantTenantIndices(),
			map[string]map[string]string{
				"engine search": {"db.system.name": "qdrant", "db.operation.name": "Query", "db.collection.name": "memory", "server.address": "10.0.0.7", "server.port": "6334"},
				"engine upsert": {"db.system.name": "qdrant", "db.operation.name": "Upsert", "server.address": "10.0.0.7", "server.port": "6334"},
				"engine delete": {"db.system.name": "qdrant", "db.operation.name": "Delete", "server.address": "10.0.0.7", "server.port": "6334"},
			}},
		{"memory engine", adapters.EndpointOf(&memory.Config{}),
			map[string]map[string]string{"engine search": {}, "engine upsert": {}, "engine delete": {}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t, stackOpts{endpoint: tc.ep})
			c := s.client(t)
			ctx := context.Background()
			calls := []struct {
				method string
				params map[string]any
			}{
				{rcp.MethodRetrieve, map[string]any{"query": "zebra", "k": 2, "mode": "sparse"}},
				{rcp.MethodIndexAdd, map[string]any{"documents": []map[string]any{{"id": "n1", "text": "new zebra"}}}},
				{rcp.MethodIndexDelete, map[string]any{"ids": []string{"n1"}}},
			}
			for _, call := range calls {
				if _, err := c.Call(ctx, call.method, call.params); err != nil {
					t.Fatalf("%s: %v", call.method, err)
				}
			}
			spans := byName(s.rec.Ended())
			for name, want := range tc.want {
				sp := one(t, spans, name)
				got := spanAttrs(sp)
				for _, k := range dbKeys {
					w, ok := want[k]
					switch {
					case ok && got[k] != w:
						t.Errorf("%s %s = %q, want %q", name, k, got[k], w)
					case !ok && got[k] != "":
						t.Errorf("%s has %s = %q, want none", name, k, got[k])
					}
				}
				// The RCP attributes stay.
				if got["rcp.engine"] != engineName || got["rcp.op"] != strings.TrimPrefix(name, "engine ") {
					t.Errorf("%s rcp.engine/rcp.op = %q/%q", name, got["rcp.engine"], got["rcp.op"])
				}
			}
			if got := spanAttrs(one(t, spans, "engine search")); got["rcp.target"] != "memory" {
				t.Errorf("engine search rcp.target = %q, want memory", got["rcp.target"])
			}
		})
	}
}

// TestEngineSpanErrorType: a failed engine call carries error.type, the
// §12 symbol of the adapter's classification, with rcp.code beside it.
func TestEngineSpanErrorType(t *testing.T) {
	tests := []struct {
		code rcp.Code
		want string
	}{
		{rcp.CodeBackendUnavailable, "BackendUnavailable"},
		{rcp.CodeTimeout, "Timeout"},
		{rcp.CodeInternalError, "InternalError"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			s := newStack(t, stackOpts{wrap: failWith(tc.code), endpoint: adapters.Endpoint{System: "qdrant"}})
			if _, err := s.client(t).Call(context.Background(), rcp.MethodRetrieve, map[string]any{"query": "zebra", "k": 2, "mode": "sparse"}); err == nil {
				t.Fatal("retrieve succeeded over a failing engine")
			}
			sp := one(t, byName(s.rec.Ended()), "engine search")
			wantAttr(t, sp, "error.type", tc.want)
			wantIntAttr(t, sp, "rcp.code", int64(tc.code))
		})
	}
}

// secretBackend is a server.Backend whose Retrieve fails with a message
// quoting a credential, as a backend relaying an upstream's text might.
type secretBackend struct {
	server.Backend
	msg string
}

func (b secretBackend) Retrieve(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	return nil, &rcp.Error{Code: rcp.CodeBackendUnavailable, Message: b.msg}
}

// TestSpanErrorTextRedacted: the error text a request span records is
// scrubbed of every configured secret, short ones included, whether the
// span is opened by the Observer or by the Backend decorator alone.
func TestSpanErrorTextRedacted(t *testing.T) {
	secrets := []string{"s3cr3t-token-value", "pw1"}
	msg := "upstream said: Authorization: Bearer s3cr3t-token-value (user pw1)"
	for _, observer := range []bool{false, true} {
		t.Run(map[bool]string{false: "backend decorator", true: "observer"}[observer], func(t *testing.T) {
			s := newStack(t, stackOpts{redactor: telemetry.NewRedactor(secrets)})
			b := s.tel.Backend(secretBackend{msg: msg}, "leaky")
			ctx := context.Background()
			var done func(error)
			if observer {
				ctx, done = s.tel.Observer("leaky")(ctx, rcp.MethodRetrieve, nil)
			}
			_, err := b.Retrieve(ctx, &rcp.RetrieveParams{})
			if done != nil {
				done(err)
			}
			sp := one(t, byName(s.rec.Ended()), "rcp retrieve")
			desc := sp.Status().Description
			for _, sec := range secrets {
				if strings.Contains(desc, sec) {
					t.Errorf("status %q holds the secret %q", desc, sec)
				}
				for _, kv := range sp.Attributes() {
					if strings.Contains(kv.Value.Emit(), sec) {
						t.Errorf("attribute %s holds the secret %q", kv.Key, sec)
					}
				}
			}
			if want := "-32010 upstream said: Authorization: Bearer [redacted] (user [redacted])"; desc != want {
				t.Errorf("status = %q, want %q", desc, want)
			}
			wantAttr(t, sp, "error.type", "BackendUnavailable")
		})
	}
}

// TestSpanErrorTextWithoutRedactor: with no secrets configured the
// status holds the code and the client's message unchanged.
func TestSpanErrorTextWithoutRedactor(t *testing.T) {
	s := newStack(t, stackOpts{})
	b := s.tel.Backend(secretBackend{msg: "engine unavailable"}, "plain")
	_, err := b.Retrieve(context.Background(), &rcp.RetrieveParams{})
	if !errors.As(err, new(*rcp.Error)) {
		t.Fatalf("err = %v", err)
	}
	if got := one(t, byName(s.rec.Ended()), "rcp retrieve").Status().Description; got != "-32010 engine unavailable" {
		t.Errorf("status = %q", got)
	}
}
