package access_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestRetrieveStaysInTenant: whatever filter the client sends, acme sees
// only acme documents (§15.6), and the admin key still sees both.
func TestRetrieveStaysInTenant(t *testing.T) {
	ts := newServer(t, access.Options{Keys: testKeys()})
	adversarial := map[string]any{
		"none":      nil,
		"other eq":  map[string]any{"field": "tenant", "op": "eq", "value": "globex"},
		"or widen":  map[string]any{"or": []any{map[string]any{"field": "tenant", "op": "eq", "value": "globex"}, map[string]any{"field": "tenant", "op": "eq", "value": "acme"}}},
		"not":       map[string]any{"not": map[string]any{"field": "tenant", "op": "eq", "value": "acme"}},
		"in both":   map[string]any{"field": "tenant", "op": "in", "value": []string{"acme", "globex"}},
		"ne":        map[string]any{"field": "tenant", "op": "ne", "value": "acme"},
		"exists":    map[string]any{"field": "tenant", "op": "exists", "value": true},
		"json null": nil,
	}
	for name, f := range adversarial {
		t.Run(name, func(t *testing.T) {
			p := map[string]any{"query": "rocket", "k": 50, "mode": "sparse", "includeText": true}
			if f != nil {
				p["filter"] = f
			}
			res := retrieve(t, ts, acmeKey, p)
			for _, h := range res.Hits {
				if h.Meta["tenant"] != "acme" || strings.Contains(h.Text, "globex") || strings.Contains(h.ID, "globex") {
					t.Fatalf("acme saw %s (%v)", h.ID, h.Meta)
				}
			}
			if res.Usage != nil && res.Usage.Candidates != nil && *res.Usage.Candidates > 6 {
				t.Fatalf("usage.candidates %d counts other tenants", *res.Usage.Candidates)
			}
		})
	}
	if got := tenantsOf(retrieve(t, ts, adminKey, map[string]any{"query": "rocket", "k": 50, "mode": "sparse"}).Hits); got["acme"] != 6 || got["globex"] != 6 {
		t.Fatalf("admin sees %v, want 6 of each", got)
	}
}

// TestTenantIDsAreNamespaced: ids come back without the tenant prefix, and
// index/delete of the other tenant's ids deletes and counts nothing.
func TestTenantIDsAreNamespaced(t *testing.T) {
	ts := newServer(t, access.Options{Keys: testKeys()})
	res := retrieve(t, ts, acmeKey, map[string]any{"query": "rocket", "k": 50, "mode": "sparse"})
	if len(res.Hits) != 6 || res.Hits[0].ID != strings.TrimPrefix(res.Hits[0].ID, "acme/") {
		t.Fatalf("acme ids %v: want 6, unprefixed", res.Hits)
	}
	var del rcp.IndexDeleteResult
	for _, ids := range [][]string{{"doc0", "doc1"}, {"globex/doc0"}, {"../globex/doc0"}} {
		call(t, ts, globexKey, "index/delete", map[string]any{"ids": ids}).result(t, &del)
		if del.Deleted != 0 && ids[0] != "doc0" {
			t.Fatalf("globex deleted %d of %v", del.Deleted, ids)
		}
	}
	if n := len(retrieve(t, ts, acmeKey, map[string]any{"query": "rocket", "k": 50, "mode": "sparse"}).Hits); n != 6 {
		t.Fatalf("acme has %d documents after globex's deletes, want 6", n)
	}
	if n := len(retrieve(t, ts, globexKey, map[string]any{"query": "rocket", "k": 50, "mode": "sparse"}).Hits); n != 4 {
		t.Fatalf("globex has %d documents after deleting two of its own, want 4", n)
	}
}

// TestTenantWritesAreForcedIntoScope: a tenant's documents get its tenant
// value (repeating it is allowed, another one is not: see
// TestHostileMetaCannotPlantInAnotherTenant), and a colliding id does not
// overwrite another tenant's document.
func TestTenantWritesAreForcedIntoScope(t *testing.T) {
	ts := newServer(t, access.Options{Keys: testKeys()})
	var add rcp.IndexAddResult
	docs := []map[string]any{
		{"id": "doc0", "text": "planted rocket", "meta": map[string]any{"tenant": "globex"}},
		{"text": "minted rocket"},
	}
	call(t, ts, globexKey, "index/add", map[string]any{"documents": docs}).result(t, &add)
	if len(add.IDs) != 2 || add.IDs[0] != "doc0" || strings.HasPrefix(add.IDs[1], "globex/") {
		t.Fatalf("ids %v: want the client's id and an unprefixed minted one", add.IDs)
	}
	acme := retrieve(t, ts, acmeKey, map[string]any{"query": "planted minted rocket", "k": 50, "mode": "sparse", "includeText": true})
	for _, h := range acme.Hits {
		if strings.Contains(h.Text, "planted") || strings.Contains(h.Text, "minted") {
			t.Fatalf("globex's write reached acme: %+v", h)
		}
	}
	var del rcp.IndexDeleteResult
	call(t, ts, globexKey, "index/delete", map[string]any{"ids": add.IDs}).result(t, &del)
	if del.Deleted != 2 {
		t.Fatalf("globex deleted %d of its own 2 documents", del.Deleted)
	}
}

// TestCursorIsBoundToKey: a page cursor issued to acme is -32602 for
// globex and for the admin, and still works for acme.
func TestCursorIsBoundToKey(t *testing.T) {
	ts := newServer(t, access.Options{Keys: testKeys()})
	p := map[string]any{"query": "rocket", "k": 2, "mode": "sparse"}
	first := retrieve(t, ts, acmeKey, p)
	if first.NextCursor == "" {
		t.Fatal("no cursor on a 2-of-6 page")
	}
	p["cursor"] = first.NextCursor
	for _, secret := range []string{globexKey, adminKey, readerKey} {
		r := call(t, ts, secret, "retrieve", p)
		if r.err == nil || r.err.Code != rcp.CodeInvalidParams || r.err.Data == nil || r.err.Data.Field != "cursor" {
			t.Fatalf("acme's cursor under another key: %+v", r.err)
		}
	}
	second := retrieve(t, ts, acmeKey, p)
	if len(second.Hits) != 2 || second.Hits[0].ID == first.Hits[0].ID || second.Hits[0].Meta["tenant"] != "acme" {
		t.Fatalf("acme's second page: %+v", second.Hits)
	}
}

// TestWriteNeedsWriteScope: a read-only key keeps the capability set every
// caller sees but is refused index/add and index/delete with -32012.
func TestWriteNeedsWriteScope(t *testing.T) {
	ts := newServer(t, access.Options{Keys: testKeys()})
	var info rcp.InitializeResult
	call(t, ts, readerKey, "info", map[string]any{}).result(t, &info)
	if info.Capabilities.Index == nil || !info.Capabilities.Index.Writable {
		t.Fatal("the capability set should not depend on the key (§13.2)")
	}
	for method, params := range map[string]any{
		"index/add":    map[string]any{"documents": []any{map[string]any{"id": "x", "text": "y"}}},
		"index/delete": map[string]any{"ids": []string{"acme/doc0"}},
	} {
		call(t, ts, readerKey, method, params).wantError(t, http.StatusOK, rcp.CodeUnauthorized)
	}
	if n := tenantsOf(retrieve(t, ts, readerKey, map[string]any{"query": "rocket", "k": 50, "mode": "sparse"}).Hits)["acme"]; n != 6 {
		t.Fatalf("reader's denied delete removed something: acme has %d", n)
	}
}

// TestShutdownNeedsAdminScope: over HTTP only a key with admin may call
// shutdown; any other key gets -32012 (HTTP 200, a JSON-RPC answer), as
// does a shutdown inside a batch, while the batch's other members run.
func TestShutdownNeedsAdminScope(t *testing.T) {
	ts := newServer(t, access.Options{Keys: testKeys()})
	for _, tc := range []struct {
		name, secret string
		want         rcp.Code // 0: a result
	}{
		{"admin", adminKey, 0},
		{"reader", readerKey, rcp.CodeUnauthorized},
		{"writable tenant", acmeKey, rcp.CodeUnauthorized},
	} {
		r := call(t, ts, tc.secret, "shutdown", map[string]any{})
		if tc.want == 0 {
			r.result(t, &map[string]any{})
			continue
		}
		r.wantError(t, http.StatusOK, tc.want)
	}
	batch := []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"shutdown"}]`)
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/rcp", bytes.NewReader(batch))
	req.Header.Set("Authorization", "Bearer "+readerKey)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []struct {
		Result json.RawMessage
		Error  *rcp.Error
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out) != 2 || out[0].Error != nil ||
		out[1].Error == nil || out[1].Error.Code != rcp.CodeUnauthorized {
		t.Fatalf("batch [ping, shutdown] with a reader key: %+v (%v), want [result, -32012]", out, err)
	}
}

// TestEngineScope: a key for another engine is 403 on this one, and the
// helpers for a federating catalog narrow the engine list.
func TestEngineScope(t *testing.T) {
	ts := newServer(t, access.Options{Keys: testKeys()})
	call(t, ts, otherKey, "info", map[string]any{}).wantError(t, http.StatusForbidden, rcp.CodeUnauthorized)
	r := post(t, ts, "/engines/elsewhere/rcp/ping", otherKey, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if r.status == http.StatusForbidden || r.status == http.StatusUnauthorized {
		t.Fatalf("key for engine elsewhere rejected on its own path: %d", r.status)
	}
	r = post(t, ts, "/engines/docs/rcp/ping", otherKey, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	r.wantError(t, http.StatusForbidden, rcp.CodeUnauthorized)
}

// TestCursorKeysRotateAcrossGuards: two guards (two replicas, or one
// before and after a restart) with the same configured keys open each
// other's cursors, still bound to the key they were issued to; after a
// rotation the old key still opens, and once it is removed it does not.
func TestCursorKeysRotateAcrossGuards(t *testing.T) {
	k1, k2 := []byte("first-cursor-key-0123456789abcde"), []byte("second-cursor-key-0123456789abcd")
	replica := func(keys ...[]byte) *httptest.Server {
		return newServer(t, access.Options{Keys: testKeys(), CursorKeys: keys})
	}
	a, b, c := replica(k1), replica(k2, k1), replica(k2)
	p := map[string]any{"query": "rocket", "k": 2, "mode": "sparse"}
	first := retrieve(t, a, acmeKey, p)
	if first.NextCursor == "" {
		t.Fatal("no cursor on a 2-of-6 page")
	}
	p["cursor"] = first.NextCursor
	want := retrieve(t, a, acmeKey, p)
	if got := retrieve(t, b, acmeKey, p); !sameIDs(got.Hits, want.Hits) || len(got.Hits) != 2 {
		t.Fatalf("page 2 on the rotated replica: %v, want %v", got.Hits, want.Hits)
	}
	badCursor := func(ts *httptest.Server, secret string) {
		t.Helper()
		r := call(t, ts, secret, "retrieve", p)
		if r.err == nil || r.err.Code != rcp.CodeInvalidParams || r.err.Data == nil || r.err.Data.Field != "cursor" {
			t.Fatalf("want -32602 on cursor, got %+v", r.err)
		}
	}
	badCursor(b, globexKey) // still bound to acme
	badCursor(c, acmeKey)   // k1 removed
	delete(p, "cursor")
	p["cursor"] = retrieve(t, b, acmeKey, p).NextCursor
	if got := retrieve(t, c, acmeKey, p); !sameIDs(got.Hits, want.Hits) {
		t.Fatalf("a cursor sealed after the rotation on a replica with only the new key: %v", got.Hits)
	}
	badCursor(a, acmeKey) // sealed with k2, which a does not have
}

func sameIDs(a, b []rcp.Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}
