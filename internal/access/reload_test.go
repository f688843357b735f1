package access_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// reloadable serves the memory store through a guard the test keeps.
func reloadable(t *testing.T, o access.Options) (*access.Guard, *httptest.Server) {
	t.Helper()
	eng, err := retrieval.NewEngine(context.Background(), newStore(), retrieval.Options{
		Name: "test", Version: "0", Policy: capability.Policy{MaxK: 50, DefaultCandidateK: 50, Writable: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	o.DefaultEngine = "docs"
	g, err := access.New(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Backend("docs", eng)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Middleware(server.New(b, server.Options{Authorize: access.AuthorizeMethod}).Handler()))
	t.Cleanup(ts.Close)
	return g, ts
}

// TestReloadSwapsScopes: after Reload a key's new filter applies to its
// next request; a key removed is 401; a reload whose filter the engine
// cannot enforce is refused and changes nothing.
func TestReloadSwapsScopes(t *testing.T) {
	g, ts := reloadable(t, access.Options{Keys: testKeys()})
	q := map[string]any{"query": "rocket", "k": 50, "mode": "sparse"}
	if got := tenantsOf(retrieve(t, ts, acmeKey, q).Hits); got["acme"] != 6 || len(got) != 1 {
		t.Fatalf("acme before reload sees %v", got)
	}
	// The same secret now belongs to globex's scope; reader is gone.
	moved := tenantKey("acme", acmeKey, "globex")
	if err := g.Reload(access.Options{Keys: []access.Key{moved}}); err != nil {
		t.Fatal(err)
	}
	if got := tenantsOf(retrieve(t, ts, acmeKey, q).Hits); got["globex"] != 6 || len(got) != 1 {
		t.Fatalf("after reload the key sees %v, want globex only", got)
	}
	call(t, ts, readerKey, "retrieve", q).wantError(t, http.StatusUnauthorized, rcp.CodeUnauthorized)
	bad := key("bad", readerKey)
	bad.Filter = []byte(`{"field":"missing","op":"eq","value":"x"}`)
	if err := g.Reload(access.Options{Keys: []access.Key{moved, bad}}); err == nil {
		t.Fatal("a filter on an unknown field was accepted on reload")
	}
	call(t, ts, readerKey, "retrieve", q).wantError(t, http.StatusUnauthorized, rcp.CodeUnauthorized)
	if got := tenantsOf(retrieve(t, ts, acmeKey, q).Hits); got["globex"] != 6 || len(got) != 1 {
		t.Fatalf("after a refused reload the key sees %v", got)
	}
}

// TestReloadUnderLoad: requests racing reloads that alternate two key
// sets each get an answer of one of the two policies, never a mix (a
// key scoped to acme never sees globex), and the race detector stays
// quiet.
func TestReloadUnderLoad(t *testing.T) {
	g, ts := reloadable(t, access.Options{Keys: testKeys()})
	a := access.Options{Keys: testKeys()}
	b := access.Options{Keys: []access.Key{tenantKey("acme", acmeKey, "acme")}, MaxInflight: 64}
	var reloader, readers sync.WaitGroup
	stop := make(chan struct{})
	reloads := 0
	reloader.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			o := a
			if i%2 == 1 {
				o = b
			}
			if err := g.Reload(o); err != nil {
				t.Error(err)
				return
			}
			reloads++
		}
	})
	for range 4 {
		readers.Go(func() {
			for range 25 {
				r := call(t, ts, acmeKey, "retrieve", map[string]any{"query": "rocket", "k": 50, "mode": "sparse"})
				var res rcp.RetrieveResult
				r.result(t, &res)
				if got := tenantsOf(res.Hits); got["acme"] != 6 || len(got) != 1 {
					t.Errorf("acme saw %v during reloads", got)
				}
				st := call(t, ts, readerKey, "info", nil).status
				if st != http.StatusOK && st != http.StatusUnauthorized {
					t.Errorf("reader: HTTP %d", st)
				}
			}
		})
	}
	readers.Wait()
	close(stop)
	reloader.Wait()
	if reloads < 2 {
		t.Fatalf("only %d reloads ran during the requests", reloads)
	}
}
