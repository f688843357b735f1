package federation_test

import (
	"context"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestSessionPassedOn: the aggregator advertises session only when every
// engine keeps sessions (dedup only if all dedup, the shortest TTL), and
// then hands sessionId to every engine; otherwise it is -32005 on
// sessionId under strict, dropped with a note under strict:false.
func TestSessionPassedOn(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	record := func(name string) func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
		return func(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
			mu.Lock()
			seen[name] = p.SessionID
			mu.Unlock()
			return &rcp.RetrieveResult{Hits: []rcp.Hit{{ID: name + "-1", Score: 1}}}, nil
		}
	}
	a, b := stub(nil, nil, nil), stub(nil, nil, nil)
	a.RetrieveFunc, b.RetrieveFunc = record("a"), record("b")
	a.Caps.Session = &rcp.SessionCap{Dedup: true, TTLSeconds: 600}
	b.Caps.Session = &rcp.SessionCap{Dedup: true, TTLSeconds: 300}
	agg := newAgg(t, []federation.Engine{{ID: "a", Backend: a, Weight: 1}, {ID: "b", Backend: b, Weight: 1}}, federation.Options{Name: "agg"})
	if c := agg.Capabilities().Session; c == nil || !c.Dedup || c.TTLSeconds != 300 {
		t.Fatalf("federated session %+v, want dedup with the shortest TTL 300", c)
	}
	c := client(t, agg)
	if _, err := retrieve(t, c, map[string]any{"query": "q", "k": 2, "sessionId": "trip-1"}); err != nil {
		t.Fatal(err)
	}
	if seen["a"] != "trip-1" || seen["b"] != "trip-1" {
		t.Errorf("engines saw sessionId %v, want trip-1 at both", seen)
	}

	b.Caps.Session = nil // one engine ignores sessionId: not federated
	agg2 := newAgg(t, []federation.Engine{{ID: "a", Backend: a, Weight: 1}, {ID: "b", Backend: b, Weight: 1}}, federation.Options{Name: "agg"})
	if agg2.Capabilities().Session != nil {
		t.Fatal("session advertised although engine b ignores sessionId")
	}
	c2 := client(t, agg2)
	if _, err := retrieve(t, c2, map[string]any{"query": "q", "k": 2, "sessionId": "trip-2"}); err == nil || err.Code != rcp.CodeOptionUnsupported {
		t.Errorf("sessionId without federated sessions: %v, want -32005", err)
	}
	res, err := retrieve(t, c2, map[string]any{"query": "q", "k": 2, "sessionId": "trip-3", "strict": false})
	if err != nil || seen["a"] != "" || len(res.Usage.Notes) == 0 {
		t.Errorf("strict:false: err %v, engine a saw %q, notes %v", err, seen["a"], res.Usage)
	}
}
