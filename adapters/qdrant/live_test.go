package qdrant_test

// These tests run the adapter against Qdrant's engine: the gRPC front over
// Qdrant Edge that integration/qdrant/start.sh serves (RCP_QDRANT_ADDR).
// Expected results come from oracles over the source documents and
// vectors, not from the engine under test.

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// liveEnv is one fresh 2-d collection on a live front and an adapter on it.
type liveEnv struct {
	addr, name string
	cli        *qdrantgo.Client
	a          adapters.Adapter
	ev         *capability.Evidence
}

var points2d = []adapters.Document{
	{ID: "a", Text: "red apple pie", Vector: []float32{1, 0}},
	{ID: "b", Text: "green apple", Vector: []float32{0.9, 0.1}},
	{ID: "c", Text: "banana bread", Vector: []float32{0, 1}},
	{ID: "42", Text: "cherry tart", Vector: []float32{0.7, 0.7}},
}

// requireEngine skips loudly, or fails under RCP_REQUIRE_ENGINES.
func requireEngine(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
		t.Fatal(why + " (RCP_REQUIRE_ENGINES is set)")
	}
	t.Skip("SKIPPING: " + why)
}

// liveAddr is the front's address from RCP_QDRANT_ADDR.
func liveAddr(t testing.TB) string {
	t.Helper()
	addr := os.Getenv(addrEnv)
	if addr == "" {
		requireEngine(t, addrEnv+" is unset (run integration/qdrant/start.sh and source integration/.work/qdrant.env)")
	}
	return addr
}

// client connects go-client to addr; closed by t.Cleanup.
func client(t testing.TB, addr string) *qdrantgo.Client {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	cli, err := qdrantgo.NewClient(&qdrantgo.Config{Host: host, Port: p, SkipCompatibilityCheck: true, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// newCollection creates a uniquely named collection with a 2-d vector "v"
// of distance dist and an IDF sparse vector "s"; dropped by t.Cleanup.
func newCollection(t testing.TB, cli *qdrantgo.Client, dist qdrantgo.Distance) string {
	t.Helper()
	name := fmt.Sprintf("rcp_live_%d_%d", os.Getpid(), seq.Add(1))
	idf := qdrantgo.Modifier_Idf
	if err := cli.CreateCollection(context.Background(), &qdrantgo.CreateCollection{CollectionName: name,
		VectorsConfig:       qdrantgo.NewVectorsConfigMap(map[string]*qdrantgo.VectorParams{"v": {Size: 2, Distance: dist}}),
		SparseVectorsConfig: qdrantgo.NewSparseVectorsConfig(map[string]*qdrantgo.SparseVectorParams{"s": {Modifier: &idf}})}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.DeleteCollection(context.Background(), name) })
	return name
}

// startLive builds a collection on the front at RCP_QDRANT_ADDR (or at
// addr, when given), opens a writable adapter on it (cfg may edit the
// config), probes it and, when the probe succeeds, loads docs.
func startLive(t *testing.T, addr string, dist qdrantgo.Distance, cfg func(*qdrant.Config), docs []adapters.Document) *liveEnv {
	t.Helper()
	if addr == "" {
		addr = liveAddr(t)
	}
	ctx := context.Background()
	e := &liveEnv{addr: addr, cli: client(t, addr)}
	e.name = newCollection(t, e.cli, dist)
	c := qdrant.DefaultConfig()
	c.Address, c.Collection, c.Vector, c.SparseVector, c.SparseModel, c.Writable = addr, e.name, "v", "s", qdrant.ModelBM25, true
	if cfg != nil {
		cfg(c)
	}
	a, err := qdrant.Factory.Open(ctx, c, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	e.a = a
	if e.ev, err = a.Probe(ctx); err == nil && docs != nil {
		if err := a.(adapters.Writer).Upsert(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// startFront runs a front of its own that reports version (the engine is
// the same; only HealthCheck changes) and returns its address.
func startFront(t *testing.T, version string) string {
	t.Helper()
	python := os.Getenv("RCP_QDRANT_PYTHON")
	if python == "" {
		requireEngine(t, "RCP_QDRANT_PYTHON is unset (run integration/qdrant/start.sh and source integration/.work/qdrant.env)")
	}
	dir := t.TempDir()
	portFile := filepath.Join(dir, "port")
	cmd := exec.Command(python, filepath.Join("..", "..", "integration", "qdrant", "edge_front.py"),
		"--data", filepath.Join(dir, "data"), "--port-file", portFile, "--server-version", version)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(portFile); err == nil && len(b) > 0 {
			port, _ := bufio.NewReader(strings.NewReader(string(b))).ReadString('\n')
			return "127.0.0.1:" + strings.TrimSpace(port)
		}
	}
	t.Fatalf("front %s did not start: %s", version, log.String())
	return ""
}

func (e *liveEnv) search(t *testing.T, req adapters.SearchRequest) *adapters.Candidates {
	t.Helper()
	p, err := e.a.Plan(&req)
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.a.Search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ids(c *adapters.Candidates) string {
	var out []string
	for _, h := range c.Hits {
		out = append(out, h.ID)
	}
	return strings.Join(out, ",")
}

// Euclid and Manhattan distances come back ascending; the adapter reports
// 1/(1+d), higher first, floor 0, and maps minScore to a max distance.
func TestDistanceScores(t *testing.T) {
	for _, dist := range []qdrantgo.Distance{qdrantgo.Distance_Euclid, qdrantgo.Distance_Manhattan} {
		t.Run(dist.String(), func(t *testing.T) {
			e := startLive(t, "", dist, nil, points2d)
			q := []float32{1, 0}
			c := e.search(t, adapters.SearchRequest{Stage: adapters.StageDense, Vector: q, K: 4, CandidateK: 4})
			if got := ids(c); got != "a,b,42,c" {
				t.Fatalf("order %s, want a,b,42,c", got)
			}
			for i, h := range c.Hits {
				d := native(dist, q, points2d[indexOf(h.ID)].Vector)
				if want := 1 / (1 + d); math.Abs(h.Score-want) > 1e-5 {
					t.Errorf("%s score %g, want 1/(1+%g)=%g", h.ID, h.Score, d, want)
				}
				if i > 0 && h.Score > c.Hits[i-1].Score {
					t.Errorf("scores increase at %d", i)
				}
			}
			if c.Scale != rcp.ScaleUnbounded || c.Floor == nil || *c.Floor != 0 {
				t.Errorf("scale %s floor %v, want unbounded floor 0", c.Scale, c.Floor)
			}
			minS := 1 / (1 + native(dist, q, points2d[1].Vector)) * 0.999 // keeps a and b
			c = e.search(t, adapters.SearchRequest{Stage: adapters.StageDense, Vector: q, K: 4, CandidateK: 4, MinScore: &minS})
			if got := ids(c); got != "a,b" {
				t.Errorf("minScore %g kept %s, want a,b", minS, got)
			}
		})
	}
}

func native(d qdrantgo.Distance, a, b []float32) float64 {
	var s float64
	for i := range a {
		x := float64(a[i] - b[i])
		if d == qdrantgo.Distance_Euclid {
			s += x * x
		} else {
			s += math.Abs(x)
		}
	}
	if d == qdrantgo.Distance_Euclid {
		return math.Sqrt(s)
	}
	return s
}

func indexOf(id string) int {
	for i, d := range points2d {
		if d.ID == id {
			return i
		}
	}
	return -1
}

// Native MMR: Qdrant keeps raw similarities (not monotonic in MMR order);
// the adapter caps scores to be non-increasing and keeps the raw ones.
func TestNativeMMRMonotone(t *testing.T) {
	e := startLive(t, "", qdrantgo.Distance_Cosine, nil, points2d)
	if !e.ev.NativeMMR {
		t.Fatal("NativeMMR not in evidence on 1.17")
	}
	lambda := 0.3
	c := e.search(t, adapters.SearchRequest{Stage: adapters.StageDense, Vector: []float32{1, 0}, K: 4, CandidateK: 4, MMRLambda: &lambda})
	raised := false
	for i, h := range c.Hits {
		raw, ok := h.Scores["dense"]
		if !ok {
			t.Fatalf("hit %s lacks raw score", h.ID)
		}
		if i > 0 {
			raised = raised || raw > c.Hits[i-1].Scores["dense"]
			if h.Score > c.Hits[i-1].Score {
				t.Errorf("score increases at %d: %g > %g", i, h.Score, c.Hits[i-1].Score)
			}
		}
		if h.Score > raw {
			t.Errorf("%s: rewritten score %g above raw %g", h.ID, h.Score, raw)
		}
	}
	if !raised {
		t.Errorf("MMR order %s did not reorder raw scores; the test data should make it", ids(c))
	}
}

// Native RRF reproduces RCP's 1/(rrfK+rank): on ≥1.16 with Rrf{k =
// rrfK+1} for any rrfK, on 1.15.2 with Fusion.RRF (the engine's k=2) for
// rrfK=1, the only value the probe lets through there.
func TestNativeRRFMatchesRCP(t *testing.T) {
	for _, tc := range []struct {
		version string
		ks      []int
	}{{"", []int{1, 60}}, {"1.15.2", []int{1}}} {
		addr := ""
		if tc.version != "" {
			addr = startFront(t, tc.version)
		}
		e := startLive(t, addr, qdrantgo.Distance_Cosine, nil, points2d)
		if !e.ev.NativeRRF {
			t.Fatalf("%s: NativeRRF not in evidence", e.ev.Version)
		}
		base := adapters.SearchRequest{Text: "apple tart", Vector: []float32{0.2, 1}, K: 4, CandidateK: 4}
		var lists [][]rankmath.Ranked
		for _, st := range []adapters.Stage{adapters.StageLexical, adapters.StageDense} {
			r := base
			r.Stage = st
			var l []rankmath.Ranked
			for _, h := range e.search(t, r).Hits {
				l = append(l, rankmath.Ranked{ID: h.ID, Score: h.Score})
			}
			lists = append(lists, l)
		}
		for _, k := range tc.ks {
			r := base
			r.Stage, r.RRFK = adapters.StageHybrid, k
			got := e.search(t, r)
			want := rankmath.RRF(lists, []float64{1, 1}, k)
			if len(got.Hits) != len(want) {
				t.Errorf("%s rrfK=%d: %d hits, RCP %d", e.ev.Version, k, len(got.Hits), len(want))
			}
			for i, h := range got.Hits {
				if math.Abs(h.Score-want[i].Score) > 1e-6 || h.ID != want[i].ID {
					t.Errorf("%s rrfK=%d #%d: native %s %g, RCP %s %g", e.ev.Version, k, i, h.ID, h.Score, want[i].ID, want[i].Score)
				}
			}
		}
	}
}

// Version gates: 1.15.0 has MMR but neither Rrf{k} nor qdrant/bm25; 1.15.2
// fuses natively only for rrfK=1 (its fixed k=2); 1.16 takes any rrfK.
func TestVersionGates(t *testing.T) {
	cases := []struct {
		version          string
		sparse, rrf, mmr bool
		rrfKs            []int
	}{
		{"1.14.1", false, false, false, nil}, {"1.15.0", false, false, true, nil},
		{"1.15.2", true, true, true, []int{1}}, {"1.16.0", true, true, true, nil},
	}
	for _, c := range cases {
		t.Run(c.version, func(t *testing.T) {
			e := startLive(t, startFront(t, c.version), qdrantgo.Distance_Cosine, nil, points2d)
			if e.ev == nil {
				t.Fatal("probe failed")
			}
			if got := len(e.ev.TextFields) > 0; got != c.sparse {
				t.Errorf("sparse %t, want %t (notes %q)", got, c.sparse, e.ev.Notes)
			}
			if e.ev.NativeRRF != c.rrf || e.ev.NativeMMR != c.mmr {
				t.Errorf("rrf %t mmr %t, want %t %t", e.ev.NativeRRF, e.ev.NativeMMR, c.rrf, c.mmr)
			}
			if !slices.Equal(e.ev.NativeRRFKs, c.rrfKs) {
				t.Errorf("native rrfKs %v, want %v", e.ev.NativeRRFKs, c.rrfKs)
			}
		})
	}
}

// A configured alias resolves; writes keep ids; delete counts only
// existing points.
func TestAliasAndWrites(t *testing.T) {
	e := startLive(t, "", qdrantgo.Distance_Cosine, nil, points2d)
	ctx := context.Background()
	alias := e.name + "_current"
	if err := e.cli.CreateAlias(ctx, alias, e.name); err != nil {
		t.Fatal(err)
	}
	cfg := qdrant.DefaultConfig()
	cfg.Address, cfg.Collection, cfg.Vector = e.addr, alias, "v"
	a, err := qdrant.Factory.Open(ctx, cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ev, err := a.Probe(ctx)
	if err != nil || ev.Target != alias || ev.DocCount != int64(len(points2d)) || !strings.Contains(strings.Join(ev.Notes, ";"), fmt.Sprintf("alias %q resolves to collection %q", alias, e.name)) {
		t.Fatalf("alias probe: %v %+v", err, ev)
	}
	c := e.search(t, adapters.SearchRequest{Stage: adapters.StageDense, Vector: []float32{0.7, 0.7}, K: 1, CandidateK: 1})
	if ids(c) != "42" {
		t.Errorf("id %q, want the original id 42", ids(c))
	}
	n, err := e.a.(adapters.Writer).Delete(ctx, []string{"42", "42", "absent"})
	if err != nil || n != 1 {
		t.Errorf("delete = %d, %v; want 1", n, err)
	}
	if n, _ := e.a.(adapters.Writer).Delete(ctx, []string{"42"}); n != 0 {
		t.Errorf("second delete = %d, want 0", n)
	}
}

// TestMetaFields: with meta_fields the payload comes back limited to the
// listed keys (the original id and the text still arrive); without it,
// every key but the text becomes meta.
func TestMetaFields(t *testing.T) {
	for _, tc := range []struct {
		fields []string
		want   []string
	}{{nil, []string{"extra", "keep"}}, {[]string{"keep"}, []string{"keep"}}} {
		e := startLive(t, "", qdrantgo.Distance_Cosine, func(c *qdrant.Config) { c.MetaFields = tc.fields }, points2d)
		doc := adapters.Document{ID: "m1", Text: "field selection", Vector: []float32{-1, 0}, Meta: map[string]any{"keep": "k", "extra": "x"}}
		if err := e.a.(adapters.Writer).Upsert(context.Background(), []adapters.Document{doc}); err != nil {
			t.Fatal(err)
		}
		c := e.search(t, adapters.SearchRequest{Stage: adapters.StageDense, Vector: []float32{-1, 0}, K: 1, CandidateK: 1, WithText: true})
		if len(c.Hits) != 1 || c.Hits[0].ID != "m1" || c.Hits[0].Text != "field selection" {
			t.Fatalf("meta_fields %v: hits %+v", tc.fields, c.Hits)
		}
		if got := slices.Sorted(maps.Keys(c.Hits[0].Meta)); !slices.Equal(got, tc.want) {
			t.Errorf("meta_fields %v: meta keys %v, want %v", tc.fields, got, tc.want)
		}
	}
}

// A configured collection that does not exist is -32010 at probe time.
func TestMissingCollection(t *testing.T) {
	e := startLive(t, "", qdrantgo.Distance_Cosine, func(c *qdrant.Config) { c.Collection = "rcp_absent_collection" }, nil)
	if _, err := e.a.Probe(context.Background()); e.a.ErrorCode(err) != rcp.CodeBackendUnavailable {
		t.Errorf("missing collection: code %d (%v)", e.a.ErrorCode(err), err)
	}
}

// TestLiveHealth: a loaded collection on the real engine reports green
// (once any optimization it started is done) as a collection.
func TestLiveHealth(t *testing.T) {
	e := startLive(t, "", qdrantgo.Distance_Cosine, nil, points2d)
	var h adapters.Health
	var err error
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if h, err = e.a.(adapters.HealthChecker).Health(context.Background()); err == nil && h.Status == adapters.HealthGreen {
			break
		}
	}
	if err != nil || h.Status != adapters.HealthGreen || h.State != "green" || h.Of != "collection" {
		t.Errorf("health %+v, %v; want a green collection", h, err)
	}
}
