// Package adaptertest is a test kit: the conformance suite every adapter
// passes. Only tests import it; the shipped binary never links it
// (internal/archtest).
//
// An adapter's _test.go implements Harness (build a target from Schema,
// load its Docs, return an adapter bound to it) and calls
// RunConformanceTests and RunBenchmarks. The suite builds an
// retrieval.Engine over the adapter with the FAKE Embedder, wraps it in the
// rcptest in-memory client and issues every request as JSON-RPC, so the
// real dispatcher, the real Engine and the real adapter are exercised and
// every frame is validated against the RCP schema. A few checks call the
// Adapter directly (Plan determinism, ErrorCode totality, ctx honouring).
//
// Variance is capability-driven: a check for an unadvertised feature is
// skipped with "not advertised: …", while the matching
// Capabilities/AbsentRejected check always runs. Oracles (filter
// predicates, cosine order) are computed from the Corpus structs,
// independently of the mapping package.
package adaptertest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// Harness is implemented in each adapter's _test.go.
type Harness interface {
	// MakeAdapter creates a fresh target (index/collection) from s, loads
	// s.Docs into it (vectors included) and returns an adapter bound to it.
	// The target must be writable when the engine supports writes.
	MakeAdapter(ctx context.Context, s Schema) (adapters.Adapter, error)
	// Unreachable returns an adapter configured for an address with no
	// engine, or ErrNotApplicable when the adapter has no network.
	Unreachable(ctx context.Context) (adapters.Adapter, error)
	// Close removes everything the harness created.
	Close()
}

// HarnessMaker is called once per group or subtest that needs fresh state
// (as in go-cloud drivertest). It takes testing.TB so that RunBenchmarks
// can share it.
type HarnessMaker func(ctx context.Context, t testing.TB) (Harness, error)

// ErrNotApplicable is returned by Harness.Unreachable for adapters that
// cannot be unreachable (in-process engines); the check is then skipped.
var ErrNotApplicable = errors.New("adaptertest: not applicable to this adapter")

// Traits are documented, tolerated differences between engines. Every
// trait is a difference users can see; keep this list short. A Harness
// declares them by also implementing TraitsProvider.
type Traits struct {
	// ScoreTolerance is the absolute tolerance when comparing dense
	// cosine scores with the oracle (engines store float32 and may
	// transform scores). Zero means 1e-4.
	ScoreTolerance float64
	// SparseScale is the _meta.scoreScale of sparse results; "" means bm25.
	SparseScale rcp.ScoreScale
	// NoVectors: the engine under test has no vector search, so the
	// harness maps no vector field and the probe must report none (the
	// suite then checks the dense mode is absent, not that it works).
	NoVectors bool
}

// TraitsProvider is optionally implemented by a Harness.
type TraitsProvider interface{ Traits() Traits }

const callTimeout = 30 * time.Second

// RunConformanceTests runs the whole suite. Subtest names are stable.
func RunConformanceTests(t *testing.T, newHarness HarnessMaker) {
	t.Run("Probe", func(t *testing.T) { testProbe(t, newHarness) })
	t.Run("Capabilities", func(t *testing.T) {
		t.Run("AdvertisedWorks", func(t *testing.T) { testAdvertisedWorks(t, newHarness) })
		t.Run("AbsentRejected", func(t *testing.T) { testAbsentRejected(t, newHarness) })
	})
	t.Run("Filter", func(t *testing.T) { testFilter(t, newHarness) })
	t.Run("Ranking", func(t *testing.T) { testRanking(t, newHarness) })
	t.Run("Funnel", func(t *testing.T) { testFunnel(t, newHarness) })
	t.Run("Pagination", func(t *testing.T) { testPagination(t, newHarness) })
	t.Run("Determinism", func(t *testing.T) { testDeterminism(t, newHarness) })
	t.Run("Writes", func(t *testing.T) { testWrites(t, newHarness) })
	t.Run("Errors", func(t *testing.T) { testErrors(t, newHarness) })
}

// variant selects the Engine configuration of an env.
type variant int

const (
	// full: fake embedder, every schema field and operator, writable,
	// streaming.
	full variant = iota
	// narrowed: no embedder, a subset of fields and operators, read-only:
	// so that AbsentRejected has unadvertised features to probe on any
	// adapter.
	narrowed
)

// narrowedFields and narrowedOps are the narrowed policy's allow-lists.
var (
	narrowedFields = []string{"lang", "tags", "year", "published", "title"}
	narrowedOps    = []filterlang.Op{filterlang.OpEq, filterlang.OpIn, filterlang.OpExists}
)

// engineOptions returns the Engine options for v.
func engineOptions(s Schema, v variant) retrieval.Options {
	key := []byte("adaptertest-cursor-key-0123456789")
	if v == narrowed {
		p := capability.Policy{MaxK: 50, Fields: narrowedFields, Operators: narrowedOps}
		return retrieval.Options{Name: "adaptertest", Version: "narrowed", Policy: p, CursorKeys: [][]byte{key}}
	}
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	p := capability.Policy{MaxK: 100, DefaultCandidateK: 100, Writable: true, Streaming: true,
		Fields: names, Operators: filterlang.AllOps, EmbedDim: 8, EmbedIdentity: FakeIdentity}
	emb := Embedder()
	if s.Vector.Element == capability.ElementInt8 {
		emb = Int8Embedder()
	}
	return retrieval.Options{Name: "adaptertest", Version: "full", Policy: p, Embedder: emb, CursorKeys: [][]byte{key}}
}

// env is one harness + adapter + Engine + in-memory client.
type env struct {
	schema Schema
	h      Harness
	a      adapters.Adapter
	eng    *retrieval.Engine
	c      *rcptest.Client
	caps   rcp.Capabilities
	traits Traits
}

// newEnv builds a fresh env; everything is released by t.Cleanup.
func newEnv(t testing.TB, mk HarnessMaker, v variant) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*callTimeout)
	defer cancel()
	h, err := mk(ctx, t)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	t.Cleanup(h.Close)
	e := &env{schema: DefaultSchema(), h: h, traits: traitsOf(h)}
	if _, ok := h.(int8Harness); ok {
		e.schema = Int8Schema()
	}
	if e.a, err = h.MakeAdapter(ctx, e.schema); err != nil {
		t.Fatalf("MakeAdapter: %v", err)
	}
	if e.eng, err = retrieval.NewEngine(ctx, e.a, engineOptions(e.schema, v)); err != nil {
		e.a.Close()
		t.Fatalf("NewEngine: %v", err)
	}
	t.Cleanup(func() { e.eng.Close() })
	e.c = rcptest.NewClient(t, e.eng)
	t.Cleanup(e.c.Close)
	res, err := e.c.Initialize(ctx)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	e.caps = res.Capabilities
	return e
}

func traitsOf(h Harness) Traits {
	var tr Traits
	if p, ok := h.(TraitsProvider); ok {
		tr = p.Traits()
	}
	if tr.ScoreTolerance == 0 {
		tr.ScoreTolerance = 1e-4
	}
	if tr.SparseScale == "" {
		tr.SparseScale = rcp.ScaleBM25
	}
	return tr
}

// call issues one JSON-RPC request; a result is validated against the
// schema binding for method, an error must carry a §12 code.
func (e *env) call(t testing.TB, method string, params any) (json.RawMessage, *rcp.Error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	raw, rerr := e.c.Call(ctx, method, params)
	if rerr != nil {
		if rerr.Code == 0 || !rerr.Code.Valid() {
			t.Errorf("%s: error code %d is not a §12 code", method, rerr.Code)
		}
		return nil, rerr
	}
	if err := rcptest.ValidateResult(method, raw); err != nil {
		t.Errorf("%s: result violates the schema: %v\n%s", method, err, raw)
	}
	return raw, nil
}

// retrieve calls retrieve and decodes the result.
func (e *env) retrieve(t testing.TB, p P) (*rcp.RetrieveResult, *rcp.Error) {
	t.Helper()
	raw, rerr := e.call(t, rcp.MethodRetrieve, p)
	if rerr != nil {
		return nil, rerr
	}
	var res rcp.RetrieveResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("decode retrieve result: %v\n%s", err, raw)
	}
	return &res, nil
}

// mustRetrieve is retrieve that fails the test on an error.
func (e *env) mustRetrieve(t testing.TB, p P) *rcp.RetrieveResult {
	t.Helper()
	res, rerr := e.retrieve(t, p)
	if rerr != nil {
		t.Fatalf("retrieve %s: unexpected error %d %s (data %+v)", p, rerr.Code, rerr.Message, rerr.Data)
	}
	return res
}

// P is a request's params, marshalled as given (so malformed values such
// as k:1.5 can be sent).
type P map[string]any

// With returns a copy of p with key set to v.
func (p P) With(key string, v any) P {
	out := make(P, len(p)+1)
	for k, x := range p {
		out[k] = x
	}
	out[key] = v
	return out
}

// String renders p as JSON, for failure messages.
func (p P) String() string {
	b, _ := json.Marshal(map[string]any(p))
	return string(b)
}

// anyValue in wantError accepts any non-empty data.field / data.option.
const anyValue = "*"

// wantError asserts err has code and, when non-empty, data.field and
// data.option (anyValue: present and non-empty).
func wantError(t testing.TB, err *rcp.Error, code rcp.Code, field, option string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got success, want error %d (%s)", code, code)
	}
	if err.Code != code {
		t.Fatalf("error code = %d (%s), want %d (%s); message %q data %+v", err.Code, err.Code, code, code, err.Message, err.Data)
	}
	checkData(t, "field", dataField(err), field)
	checkData(t, "option", dataOption(err), option)
}

func checkData(t testing.TB, name, got, want string) {
	t.Helper()
	switch {
	case want == "":
	case want == anyValue && got == "":
		t.Errorf("error.data.%s is empty, want one", name)
	case want != anyValue && got != want:
		t.Errorf("error.data.%s = %q, want %q", name, got, want)
	}
}

func dataField(err *rcp.Error) string {
	if err.Data == nil {
		return ""
	}
	return err.Data.Field
}

func dataOption(err *rcp.Error) string {
	if err.Data == nil {
		return ""
	}
	return err.Data.Option
}
