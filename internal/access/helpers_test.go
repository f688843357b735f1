package access_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// Secrets used by the tests; configuration only ever holds their digests.
const (
	adminKey  = "admin-key-000000000000"
	acmeKey   = "acme-key-0000000000000"
	globexKey = "globex-key-00000000000"
	readerKey = "reader-key-00000000000"
	otherKey  = "other-engine-key-00000"
)

func key(id, secret string) access.Key {
	return access.Key{ID: id, Digest: sha256.Sum256([]byte(secret))}
}

func tenantKey(id, secret, tenant string) access.Key {
	k := key(id, secret)
	k.Write, k.IDPrefix = true, tenant+"/"
	k.Filter = json.RawMessage(fmt.Sprintf(`{"field":"tenant","op":"eq","value":%q}`, tenant))
	return k
}

// testKeys: an unrestricted admin (write and admin scopes), two writable tenants, a read-only key
// and a key scoped to another engine.
func testKeys() []access.Key {
	admin := key("admin", adminKey)
	admin.Write, admin.Admin = true, true
	other := key("other", otherKey)
	other.Engines = []string{"elsewhere"}
	return []access.Key{admin, tenantKey("acme", acmeKey, "acme"), tenantKey("globex", globexKey, "globex"),
		key("reader", readerKey), other}
}

// newStore holds six documents per tenant that all match "rocket".
func newStore() *memory.Store {
	st := memory.New(memory.Options{Writable: true, Fields: map[string]filterlang.FieldType{
		"tenant": filterlang.TypeKeyword, "n": filterlang.TypeInt,
	}})
	for _, tn := range []string{"acme", "globex"} {
		for i := range 6 {
			st.Add(adapters.Document{ID: fmt.Sprintf("%s/doc%d", tn, i), Text: fmt.Sprintf("rocket engine report %d of %s", i, tn),
				Meta: map[string]any{"tenant": tn, "n": int64(i)}})
		}
	}
	return st
}

// newServer serves a memory engine through the guard, as `serve` does.
func newServer(t testing.TB, opts access.Options) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(newHandler(t, opts))
	t.Cleanup(ts.Close)
	return ts
}

// newHandler is newServer's handler without a listener (for synctest,
// whose fake clock cannot wait on real sockets).
func newHandler(t testing.TB, opts access.Options) http.Handler {
	t.Helper()
	eng, err := retrieval.NewEngine(context.Background(), newStore(), retrieval.Options{
		Name: "test", Version: "0", Policy: capability.Policy{MaxK: 50, DefaultCandidateK: 50, Writable: true},
		CursorKeys: opts.CursorKeys, // random when the test configures none
	})
	if err != nil {
		t.Fatal(err)
	}
	if opts.DefaultEngine == "" {
		opts.DefaultEngine = "docs"
	}
	g, err := access.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Backend("docs", eng)
	if err != nil {
		t.Fatal(err)
	}
	return g.Middleware(server.New(b, server.Options{Authorize: access.AuthorizeMethod}).Handler())
}

// reply is one HTTP exchange.
type reply struct {
	status int
	header http.Header
	body   map[string]json.RawMessage
	err    *rcp.Error
}

func call(t testing.TB, ts *httptest.Server, secret, method string, params any) reply {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return post(t, ts, "/rcp/"+method, secret, body)
}

func post(t testing.TB, ts *httptest.Server, path, secret string, body []byte) reply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header}
	_ = json.Unmarshal(data, &r.body)
	if e, ok := r.body["error"]; ok {
		r.err = &rcp.Error{}
		if err := json.Unmarshal(e, r.err); err != nil {
			t.Fatalf("bad error object %s", e)
		}
	}
	return r
}

func (r reply) result(t testing.TB, into any) {
	t.Helper()
	if r.status != http.StatusOK || r.err != nil {
		t.Fatalf("want a result, got HTTP %d error %+v", r.status, r.err)
	}
	if err := json.Unmarshal(r.body["result"], into); err != nil {
		t.Fatal(err)
	}
}

func (r reply) wantError(t testing.TB, status int, code rcp.Code) {
	t.Helper()
	if r.status != status || r.err == nil || r.err.Code != code {
		t.Fatalf("want HTTP %d code %d, got HTTP %d error %+v", status, code, r.status, r.err)
	}
}

func retrieve(t testing.TB, ts *httptest.Server, secret string, params map[string]any) *rcp.RetrieveResult {
	t.Helper()
	var res rcp.RetrieveResult
	call(t, ts, secret, "retrieve", params).result(t, &res)
	return &res
}

func tenantsOf(hits []rcp.Hit) map[string]int {
	m := map[string]int{}
	for _, h := range hits {
		m[fmt.Sprint(h.Meta["tenant"])]++
	}
	return m
}
