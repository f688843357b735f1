package access_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// fanOut is a minimal aggregator: it asks every engine the caller may use,
// in the caller's context, and concatenates the hits.
type fanOut struct {
	server.Backend // capabilities of the first engine
	ids            []string
	engines        []server.Backend
}

func (f *fanOut) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	out := &rcp.RetrieveResult{Hits: []rcp.Hit{}}
	for i, e := range f.engines {
		if !access.EngineAllowed(ctx, f.ids[i]) {
			continue
		}
		r, err := e.Retrieve(ctx, p)
		if err != nil {
			return nil, err
		}
		out.Hits = append(out.Hits, r.Hits...)
	}
	return out, nil
}

// TestFederatedCallIsChargedOnceAndScopedPerEngine: one retrieve through
// an aggregator over two engines costs one token, and each engine applies
// the tenant filter; AllowedEngines narrows a catalog to the key's scope.
func TestFederatedCallIsChargedOnceAndScopedPerEngine(t *testing.T) {
	keys := testKeys()
	keys[1].RPS, keys[1].Burst = 0.001, 1 // acme: only the HTTP request's token
	keys[2].Engines = []string{"docs"}    // globex: one engine
	g, err := access.New(access.Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	agg := &fanOut{ids: []string{"docs", "wiki"}}
	for _, id := range agg.ids {
		eng, err := retrieval.NewEngine(context.Background(), newStore(), retrieval.Options{
			Policy: capability.Policy{MaxK: 50, DefaultCandidateK: 50}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := g.Backend(id, eng)
		if err != nil {
			t.Fatal(err)
		}
		agg.engines = append(agg.engines, b)
	}
	agg.Backend = agg.engines[0]
	top, err := g.Backend("", agg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Middleware(server.New(top, server.Options{}).Handler()))
	defer ts.Close()
	res := retrieve(t, ts, acmeKey, map[string]any{"query": "rocket", "k": 50, "mode": "sparse"})
	if got := tenantsOf(res.Hits); got["acme"] != 12 || len(got) != 1 {
		t.Fatalf("acme through the aggregator saw %v, want 12 acme hits from 2 engines", got)
	}
	if got := tenantsOf(retrieve(t, ts, globexKey, map[string]any{"query": "rocket", "k": 50, "mode": "sparse"}).Hits); got["globex"] != 6 || len(got) != 1 {
		t.Fatalf("globex (engine docs only) saw %v, want 6 globex hits", got)
	}
	ctx := context.Background()
	if got := access.AllowedEngines(ctx, agg.ids); len(got) != 2 {
		t.Fatalf("no caller: AllowedEngines = %v, want all", got)
	}
}
