package federation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// TestDeadlineToInProcessEngine: the engine's context ends strictly before
// the caller's _meta.deadlineMs, reserving time for fusion; a stalled
// non-required engine is dropped at that deadline while the other answers.
//
// The reserve is a third of the deadline so each bound has hundreds of
// milliseconds to spare under -race on a busy machine; the lower bound on
// the answer time is causal (the fan-out cannot return before the engine's
// deadline that the stalled engine holds it to), not a timing guess.
func TestDeadlineToInProcessEngine(t *testing.T) {
	var seen atomic.Int64
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	timed := stub([]string{"x"}, nil, func(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
		dl, ok := ctx.Deadline()
		if ok {
			seen.Store(int64(time.Until(dl)))
		}
		return &rcp.RetrieveResult{Hits: []rcp.Hit{{ID: "x", Score: 1}}}, nil
	})
	stalled := stub(nil, nil, func(context.Context, *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
		<-release // ignores its context on purpose
		return &rcp.RetrieveResult{}, nil
	})
	const deadline, reserve = 1500 * time.Millisecond, 500 * time.Millisecond
	agg := newAgg(t, []federation.Engine{{ID: "timed", Backend: timed}, {ID: "stalled", Backend: stalled}},
		federation.Options{Reserve: reserve})
	c := client(t, agg)
	start := time.Now()
	res, err := retrieve(t, c, map[string]any{"query": "q", "k": 2, "_meta": map[string]any{"deadlineMs": deadline.Milliseconds()}})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	left := time.Duration(seen.Load())
	if left <= 0 || left > deadline-reserve {
		t.Errorf("engine saw %v left, want in (0, %v] (the caller's %v less the %v reserve)", left, deadline-reserve, deadline, reserve)
	}
	if took < left {
		t.Errorf("answered after %v, before the engine's deadline (%v left when it was called): the stalled engine was not waited for", took, left)
	}
	if took >= deadline {
		t.Errorf("answered after %v, past the caller's deadline of %v", took, deadline)
	}
	if len(res.Hits) != 1 || !slices.ContainsFunc(res.Usage.Notes, func(n string) bool { return strings.HasPrefix(n, "engine stalled: failed: -32014") }) {
		t.Errorf("hits %v notes %q", hitKeys(res.Hits), res.Usage.Notes)
	}
}

// recorder captures the _meta of every retrieve an HTTP server receives.
type recorder struct {
	mu    sync.Mutex
	metas []map[string]any
}

func (r *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var m struct {
			Method string
			Params struct {
				Meta map[string]any `json:"_meta"`
			}
		}
		if json.Unmarshal(body, &m) == nil && m.Method == rcp.MethodRetrieve {
			r.mu.Lock()
			r.metas = append(r.metas, m.Params.Meta)
			r.mu.Unlock()
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, req)
	})
}

func (r *recorder) all() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.metas)
}

// swappable is an HTTP server whose handler can be replaced, so two
// federations can point at each other.
type swappable struct {
	*httptest.Server
	h   atomic.Pointer[http.Handler]
	rec recorder
}

func newSwappable(t *testing.T) *swappable {
	s := &swappable{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*s.h.Load()).ServeHTTP(w, r) }))
	t.Cleanup(s.Close)
	return s
}

func (s *swappable) serve(b server.Backend) {
	var h http.Handler = server.New(b, server.Options{}).Handler()
	if a, ok := b.(*federation.Aggregator); ok {
		h = a.CatalogHandler(h, nil)
	}
	h = s.rec.wrap(h)
	s.h.Store(&h)
}

func connect(t *testing.T, url string) *federation.HTTPBackend {
	t.Helper()
	b := federation.NewHTTPBackend(url, nil)
	if err := b.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHTTPBackendForwardsHopAndDeadline: a remote engine receives a
// strictly smaller _meta.deadlineMs and the decremented hop with the
// aggregator's identity appended; its hits come back tagged.
func TestHTTPBackendForwardsHopAndDeadline(t *testing.T) {
	remote := newSwappable(t)
	remote.serve(memEngine(t, "astro"))
	agg := newAgg(t, []federation.Engine{{ID: "far", Backend: connect(t, remote.URL+"/rcp")}}, federation.Options{Identity: "gw"})
	res, err := retrieve(t, client(t, agg), map[string]any{"query": "sun", "k": 2,
		"_meta": map[string]any{"deadlineMs": 1000, "federation": map[string]any{"depth": 2, "path": []string{"edge"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Meta["engine"] != "far" {
		t.Fatalf("hits %v", hitKeys(res.Hits))
	}
	metas := remote.rec.all()
	if len(metas) != 1 {
		t.Fatalf("remote saw %d retrieves", len(metas))
	}
	ms, _ := metas[0]["deadlineMs"].(float64)
	if ms <= 0 || ms >= 1000 {
		t.Errorf("forwarded deadlineMs = %v, want in (0, 1000)", metas[0]["deadlineMs"])
	}
	hop, _ := json.Marshal(metas[0]["federation"])
	if string(hop) != `{"depth":1,"path":["edge","gw"]}` {
		t.Errorf("forwarded federation = %s", hop)
	}
}

// TestLoopDetectionTerminates: two sidecars over HTTP, each federating its
// own memory engine and the other sidecar. A query terminates: A forwards
// to B, B forwards back to A, and A, finding itself on the path, answers
// from its own engine only and notes the cycle.
func TestLoopDetectionTerminates(t *testing.T) {
	sa, sb := newSwappable(t), newSwappable(t)
	aOnly := newAgg(t, []federation.Engine{{ID: "a-local", Backend: memEngine(t, "astro")}}, federation.Options{Identity: "sidecar-a"})
	sa.serve(aOnly)
	b := newAgg(t, []federation.Engine{
		{ID: "b-local", Backend: memEngine(t, "bio")},
		{ID: "a", Backend: connect(t, sa.URL+"/rcp")},
	}, federation.Options{Identity: "sidecar-b"})
	sb.serve(b)
	a := newAgg(t, []federation.Engine{
		{ID: "a-local", Backend: memEngine(t, "astro")},
		{ID: "b", Backend: connect(t, sb.URL+"/rcp")},
	}, federation.Options{Identity: "sidecar-a"})
	sa.serve(a)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	remoteA := connect(t, sa.URL+"/rcp")
	k := int64(10)
	res, err := remoteA.Retrieve(ctx, &rcp.RetrieveParams{Query: rcp.TextQuery("sun"), K: &k})
	if err != nil {
		t.Fatalf("federated query did not terminate cleanly: %v", err)
	}
	engines := map[any]int{}
	for _, h := range res.Hits {
		engines[h.Meta["engine"]]++
	}
	if engines["a-local"] == 0 || engines["b"] == 0 {
		t.Errorf("want hits from a-local and via b, got %v", hitKeys(res.Hits))
	}
	if !slices.ContainsFunc(res.Usage.Notes, func(n string) bool {
		return strings.Contains(n, `cycle: "sidecar-a" is already on the federation path`)
	}) {
		t.Errorf("no cycle note in %q", res.Usage.Notes)
	}
	if n := len(sb.rec.all()); n != 1 {
		t.Errorf("B served %d retrieves, want 1", n)
	}
	metasA := sa.rec.all() // our own call, then B's forward
	if len(metasA) != 2 {
		t.Fatalf("A served %d retrieves, want 2", len(metasA))
	}
	hop, _ := json.Marshal(metasA[1]["federation"])
	if string(hop) != `{"depth":1,"path":["sidecar-a","sidecar-b"]}` {
		t.Errorf("B forwarded federation = %s", hop)
	}
}

// TestDepthZeroDoesNotForward: with no hop budget left an aggregator
// answers from its in-process engines only.
func TestDepthZeroDoesNotForward(t *testing.T) {
	remote := newSwappable(t)
	remote.serve(memEngine(t, "bio"))
	agg := newAgg(t, []federation.Engine{
		{ID: "local", Backend: memEngine(t, "astro")},
		{ID: "far", Backend: connect(t, remote.URL+"/rcp")},
	}, federation.Options{Identity: "gw"})
	res, err := retrieve(t, client(t, agg), map[string]any{"query": "sun", "k": 5,
		"_meta": map[string]any{"federation": map[string]any{"depth": 0, "path": []string{}}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(remote.rec.all()); n != 0 {
		t.Errorf("forwarded %d times at depth 0", n)
	}
	if !slices.ContainsFunc(res.Usage.Notes, func(n string) bool { return strings.HasPrefix(n, "engine far: federation depth exhausted") }) {
		t.Errorf("notes %q", res.Usage.Notes)
	}
}
