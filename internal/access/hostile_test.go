package access_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// Keys of the hostile suite: tenants scoped by a nested field (org.id).
const (
	orgCKey     = "org-c-key-000000000000"
	orgDKey     = "org-d-key-000000000000"
	orgMultiKey = "org-multi-key-00000000"
)

// orgServer serves a writable memory engine whose tenant field is the
// nested path org.id: tenant c, tenant d, and a key for two organisations
// (org.id in [c1, c2]).
func orgServer(t *testing.T) (*httptest.Server, *memory.Store) {
	t.Helper()
	st := memory.New(memory.Options{Writable: true, Fields: map[string]filterlang.FieldType{"org.id": filterlang.TypeKeyword}})
	st.Add(adapters.Document{ID: "c/own", Text: "quarterly report", Meta: map[string]any{"org": map[string]any{"id": "c"}}},
		adapters.Document{ID: "d/own", Text: "quarterly report", Meta: map[string]any{"org": map[string]any{"id": "d"}}})
	eng, err := retrieval.NewEngine(context.Background(), st, retrieval.Options{
		Name: "test", Version: "0", Policy: capability.Policy{MaxK: 50, DefaultCandidateK: 50, Writable: true}})
	if err != nil {
		t.Fatal(err)
	}
	org := func(id, secret, prefix, filter string) access.Key {
		k := key(id, secret)
		k.Write, k.IDPrefix, k.Filter = true, prefix, json.RawMessage(filter)
		return k
	}
	g, err := access.New(access.Options{DefaultEngine: "docs", Keys: []access.Key{
		org("c", orgCKey, "c/", `{"field":"org.id","op":"eq","value":"c"}`),
		org("d", orgDKey, "d/", `{"field":"org.id","op":"eq","value":"d"}`),
		org("multi", orgMultiKey, "m/", `{"field":"org.id","op":"in","value":["c1","c2"]}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Backend("docs", eng)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Middleware(server.New(b, server.Options{}).Handler()))
	t.Cleanup(ts.Close)
	return ts, st
}

// TestHostileMetaCannotPlantInAnotherTenant. Attack: a tenant key whose
// filter is org.id eq c (or org.id in [c1,c2]) writes a document whose
// meta gives the tenant field another value in some spelling the engine
// indexes as org.id: the nested object beside the forced flat key, the
// flat key, an array, an object inside an array, a scalar where the path
// needs an object, a path below it. Guarantee: the write is refused with
// -32602 naming the field, nothing is stored, and tenant d never sees it.
func TestHostileMetaCannotPlantInAnotherTenant(t *testing.T) {
	ts, st := orgServer(t)
	before := st.Len()
	for _, tc := range []struct {
		name, secret, docs, field string
	}{
		{"nested other tenant", orgCKey, `[{"text":"planted","meta":{"org":{"id":"d"}}}]`, "documents[0].meta.org.id"},
		{"flat other tenant", orgCKey, `[{"text":"planted","meta":{"org.id":"d"}}]`, "documents[0].meta.org.id"},
		{"both spellings", orgCKey, `[{"text":"planted","meta":{"org":{"id":"d"},"org.id":"c"}}]`, "documents[0].meta.org.id"},
		{"array with own and other", orgCKey, `[{"text":"planted","meta":{"org.id":["c","d"]}}]`, "documents[0].meta.org.id"},
		{"object in array", orgCKey, `[{"text":"planted","meta":{"org":[{"id":"d"}]}}]`, "documents[0].meta.org"},
		{"scalar prefix", orgCKey, `[{"text":"planted","meta":{"org":"d"}}]`, "documents[0].meta.org"},
		{"null prefix", orgCKey, `[{"text":"planted","meta":{"org":null}}]`, "documents[0].meta.org"},
		{"path below, flat", orgCKey, `[{"text":"planted","meta":{"org.id.x":"d"}}]`, "documents[0].meta.org.id.x"},
		{"path below, nested", orgCKey, `[{"text":"planted","meta":{"org":{"id":{"x":"d"}}}}]`, "documents[0].meta.org.id.x"},
		{"null value", orgCKey, `[{"text":"planted","meta":{"org":{"id":null}}}]`, "documents[0].meta.org.id"},
		{"second document", orgCKey, `[{"text":"fine"},{"text":"planted","meta":{"org.id":"d"}}]`, "documents[1].meta.org.id"},
		{"in filter, array", orgMultiKey, `[{"text":"planted","meta":{"org.id":["c1","d"]}}]`, "documents[0].meta.org.id"},
		{"in filter, nested array", orgMultiKey, `[{"text":"planted","meta":{"org":[{"id":"c1"},{"id":"d"}]}}]`, "documents[0].meta.org"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var docs []any
			if err := json.Unmarshal([]byte(tc.docs), &docs); err != nil {
				t.Fatal(err)
			}
			r := call(t, ts, tc.secret, "index/add", map[string]any{"documents": docs})
			if r.err == nil || r.err.Code != rcp.CodeInvalidParams || r.err.Data == nil || r.err.Data.Field != tc.field {
				t.Fatalf("want -32602 on %s, got HTTP %d %+v (%s)", tc.field, r.status, r.err, r.body["result"])
			}
			if st.Len() != before {
				t.Fatalf("store grew from %d to %d", before, st.Len())
			}
			for _, h := range retrieve(t, ts, orgDKey, map[string]any{"query": "planted fine report", "k": 50, "mode": "sparse"}).Hits {
				if h.ID != "own" { // ids come back without the tenant prefix
					t.Fatalf("tenant d sees %s (%v)", h.ID, h.Meta)
				}
			}
		})
	}
}

// TestHostileMetaRepeatingOwnTenant: the guard against planting does not
// refuse a client that echoes its own tenant value (as a hit's meta does)
// in either spelling, and the document lands in its own scope only.
func TestHostileMetaRepeatingOwnTenant(t *testing.T) {
	ts, _ := orgServer(t)
	var add rcp.IndexAddResult
	call(t, ts, orgCKey, "index/add", map[string]any{"documents": []any{
		map[string]any{"id": "n1", "text": "echoed nested", "meta": map[string]any{"org": map[string]any{"id": "c", "name": "Cee"}}},
		map[string]any{"id": "f1", "text": "echoed flat", "meta": map[string]any{"org.id": "c"}},
		map[string]any{"id": "m1", "text": "echoed missing"},
	}}).result(t, &add)
	got := retrieve(t, ts, orgCKey, map[string]any{"query": "echoed", "k": 50, "mode": "sparse"})
	if len(got.Hits) != 3 {
		t.Fatalf("tenant c sees %d of its 3 documents", len(got.Hits))
	}
	for _, h := range got.Hits {
		if filterlang.Lookup(h.Meta, "org.id") != "c" || h.Meta["org.id"] != nil {
			t.Fatalf("%s stored as %v, want the nested canonical form with org.id c", h.ID, h.Meta)
		}
	}
	if n := len(retrieve(t, ts, orgDKey, map[string]any{"query": "echoed", "k": 50, "mode": "sparse"}).Hits); n != 0 {
		t.Fatalf("tenant d sees %d of tenant c's documents", n)
	}
}

// TestHostileTenantFieldsNeedMatchingMode: a tenant scope the engine's
// tenancy mode cannot enforce is refused at start-up: a tenant value
// alone on a shared index scopes nothing, and a filter without a tenant
// cannot pick an index on an index-isolated engine.
func TestHostileTenantFieldsNeedMatchingMode(t *testing.T) {
	eng, err := retrieval.NewEngine(context.Background(), newStore(), retrieval.Options{
		Name: "test", Version: "0", Policy: capability.Policy{Writable: true}})
	if err != nil {
		t.Fatal(err)
	}
	onlyTenant := key("t", acmeKey)
	onlyTenant.Tenant = "acme"
	onlyFilter := tenantKey("f", globexKey, "globex")
	for _, tc := range []struct {
		name     string
		k        access.Key
		isolated bool
		want     string
	}{
		{"tenant on shared", onlyTenant, false, "give it a filter"},
		{"filter on isolated", onlyFilter, true, "needs a tenant"},
	} {
		opts := access.Options{Keys: []access.Key{tc.k}}
		if tc.isolated {
			opts.IndexIsolated = []string{"docs"}
		}
		g, err := access.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Backend("docs", eng); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
