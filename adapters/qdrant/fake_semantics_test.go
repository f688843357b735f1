package qdrant_test

// These tests run the adapter against the in-process FAKE Qdrant
// (qdranttest) to check the engine facts the adapter depends on.

import (
	"context"
	"errors"
	"maps"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant/qdranttest"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// fakeEnv is a FAKE server with one 2-d collection "c" and an adapter on it.
type fakeEnv struct {
	srv *qdranttest.Server
	cli *qdrantgo.Client
	a   adapters.Adapter
	ev  *capability.Evidence
}

var points2d = []adapters.Document{
	{ID: "a", Text: "red apple pie", Vector: []float32{1, 0}},
	{ID: "b", Text: "green apple", Vector: []float32{0.9, 0.1}},
	{ID: "c", Text: "banana bread", Vector: []float32{0, 1}},
	{ID: "42", Text: "cherry tart", Vector: []float32{0.7, 0.7}},
}

func startFake(t *testing.T, opts qdranttest.Options, dist qdrantgo.Distance, cfg func(*qdrant.Config)) *fakeEnv {
	t.Helper()
	ctx := context.Background()
	srv, err := qdranttest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	host, port, _ := net.SplitHostPort(srv.Addr())
	p, _ := strconv.Atoi(port)
	cli, err := qdrantgo.NewClient(&qdrantgo.Config{Host: host, Port: p, APIKey: opts.APIKey, SkipCompatibilityCheck: true, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	idf := qdrantgo.Modifier_Idf
	if err := cli.CreateCollection(ctx, &qdrantgo.CreateCollection{CollectionName: "c",
		VectorsConfig:       qdrantgo.NewVectorsConfigMap(map[string]*qdrantgo.VectorParams{"v": {Size: 2, Distance: dist}}),
		SparseVectorsConfig: qdrantgo.NewSparseVectorsConfig(map[string]*qdrantgo.SparseVectorParams{"s": {Modifier: &idf}})}); err != nil {
		t.Fatal(err)
	}
	c := qdrant.DefaultConfig()
	c.Address, c.Collection, c.Vector, c.SparseVector, c.SparseModel, c.Writable = srv.Addr(), "c", "v", "s", qdrant.ModelBM25, true
	c.APIKey = adapters.Secret(opts.APIKey)
	if cfg != nil {
		cfg(c)
	}
	a, err := qdrant.Factory.Open(ctx, c, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	e := &fakeEnv{srv: srv, cli: cli, a: a}
	if e.ev, err = a.Probe(ctx); err == nil {
		if err := a.(adapters.Writer).Upsert(ctx, points2d); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *fakeEnv) search(t *testing.T, req adapters.SearchRequest) *adapters.Candidates {
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
			e := startFake(t, qdranttest.Options{}, dist, nil)
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
	e := startFake(t, qdranttest.Options{}, qdrantgo.Distance_Cosine, nil)
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

// Native RRF on ≥1.16 with k = rrfK+1 reproduces RCP's 1/(rrfK+rank).
func TestNativeRRFMatchesRCP(t *testing.T) {
	e := startFake(t, qdranttest.Options{}, qdrantgo.Distance_Cosine, nil)
	if !e.ev.NativeRRF {
		t.Fatal("NativeRRF not in evidence on 1.17")
	}
	base := adapters.SearchRequest{Text: "apple tart", Vector: []float32{0.2, 1}, K: 4, CandidateK: 4}
	var lists [][]mapping.Ranked
	for _, st := range []adapters.Stage{adapters.StageLexical, adapters.StageDense} {
		r := base
		r.Stage = st
		var l []mapping.Ranked
		for _, h := range e.search(t, r).Hits {
			l = append(l, mapping.Ranked{ID: h.ID, Score: h.Score})
		}
		lists = append(lists, l)
	}
	for _, k := range []int{1, 60} {
		r := base
		r.Stage, r.RRFK = adapters.StageHybrid, k
		got := e.search(t, r)
		want := mapping.RRF(lists, []float64{1, 1}, k)
		for i, h := range got.Hits {
			if math.Abs(h.Score-want[i].Score) > 1e-6 || h.ID != want[i].ID {
				t.Errorf("rrfK=%d #%d: native %s %g, RCP %s %g", k, i, h.ID, h.Score, want[i].ID, want[i].Score)
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
			e := startFake(t, qdranttest.Options{Version: c.version}, qdrantgo.Distance_Cosine, nil)
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

// Errors: rate limit with retry-after, missing api key, missing collection.
func TestErrors(t *testing.T) {
	e := startFake(t, qdranttest.Options{APIKey: "k3y"}, qdrantgo.Distance_Cosine, nil)
	req := adapters.SearchRequest{Stage: adapters.StageDense, Vector: []float32{1, 0}, K: 1, CandidateK: 1}
	p, _ := e.a.Plan(&req)
	e.srv.RateLimit(1, 3)
	_, err := e.a.Search(context.Background(), p)
	var ra adapters.RetryAfterer
	if code := e.a.ErrorCode(err); code != rcp.CodeRateLimited || !errors.As(err, &ra) || ra.RetryAfterMs() != 3000 {
		t.Errorf("rate limited: code %d, retry-after %v (%v)", code, ra, err)
	}
	noKey := startFake(t, qdranttest.Options{APIKey: "k3y"}, qdrantgo.Distance_Cosine, func(c *qdrant.Config) { c.APIKey = "" })
	if _, err := noKey.a.Probe(context.Background()); noKey.a.ErrorCode(err) != rcp.CodeUnauthorized {
		t.Errorf("no api key: code %d (%v)", noKey.a.ErrorCode(err), err)
	}
	missing := startFake(t, qdranttest.Options{}, qdrantgo.Distance_Cosine, func(c *qdrant.Config) { c.Collection = "nope" })
	if _, err := missing.a.Probe(context.Background()); missing.a.ErrorCode(err) != rcp.CodeBackendUnavailable {
		t.Errorf("missing collection: code %d (%v)", missing.a.ErrorCode(err), err)
	}
}

// A configured alias resolves; writes keep ids; delete counts only
// existing points.
func TestAliasAndWrites(t *testing.T) {
	e := startFake(t, qdranttest.Options{}, qdrantgo.Distance_Cosine, nil)
	ctx := context.Background()
	if err := e.cli.CreateAlias(ctx, "current", "c"); err != nil {
		t.Fatal(err)
	}
	cfg := qdrant.DefaultConfig()
	cfg.Address, cfg.Collection, cfg.Vector = e.srv.Addr(), "current", "v"
	a, err := qdrant.Factory.Open(ctx, cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ev, err := a.Probe(ctx)
	if err != nil || ev.Target != "current" || ev.DocCount != int64(len(points2d)) || !strings.Contains(strings.Join(ev.Notes, ";"), `alias "current" resolves to collection "c"`) {
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

// BenchmarkOverhead compares a direct go-client Query with the adapter's
// Plan+Search for the same request against the in-process FAKE server: the
// difference is the adapter's own cost per retrieve (planning, protojson
// round trip, decoding, score conversion).
func BenchmarkOverhead(b *testing.B) {
	srv, err := qdranttest.Start(qdranttest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	host, port, _ := net.SplitHostPort(srv.Addr())
	p, _ := strconv.Atoi(port)
	cli, _ := qdrantgo.NewClient(&qdrantgo.Config{Host: host, Port: p, SkipCompatibilityCheck: true, PoolSize: 1})
	defer cli.Close()
	const dims = 384
	if err := cli.CreateCollection(ctx, &qdrantgo.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrantgo.NewVectorsConfigMap(map[string]*qdrantgo.VectorParams{"v": {Size: dims, Distance: qdrantgo.Distance_Cosine}})}); err != nil {
		b.Fatal(err)
	}
	cfg := qdrant.DefaultConfig()
	cfg.Address, cfg.Collection, cfg.Vector = srv.Addr(), "c", "v"
	a, _ := qdrant.Factory.Open(ctx, cfg, adapters.Deps{})
	defer a.Close()
	if _, err := a.Probe(ctx); err != nil {
		b.Fatal(err)
	}
	docs := make([]adapters.Document, 200)
	for i := range docs {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32((i*31+j*17)%97) / 97
		}
		docs[i] = adapters.Document{ID: strconv.Itoa(i), Text: "doc " + strconv.Itoa(i), Meta: map[string]any{"n": float64(i)}, Vector: v}
	}
	if err := a.(adapters.Writer).Upsert(ctx, docs); err != nil {
		b.Fatal(err)
	}
	req := adapters.SearchRequest{Stage: adapters.StageDense, Vector: docs[7].Vector, K: 10, CandidateK: 10, WithText: true}
	plan, _ := a.Plan(&req)
	var qp qdrantgo.QueryPoints
	if err := protojson.Unmarshal(plan.Body, &qp); err != nil {
		b.Fatal(err)
	}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cli.Query(ctx, &qp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("adapter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := a.Plan(&req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := a.Search(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestMetaFields: with meta_fields the payload comes back limited to the
// listed keys (the original id and the text still arrive); without it,
// every key but the text becomes meta (FAKE).
func TestMetaFields(t *testing.T) {
	for _, tc := range []struct {
		fields []string
		want   []string
	}{{nil, []string{"extra", "keep"}}, {[]string{"keep"}, []string{"keep"}}} {
		e := startFake(t, qdranttest.Options{}, qdrantgo.Distance_Cosine, func(c *qdrant.Config) { c.MetaFields = tc.fields })
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
