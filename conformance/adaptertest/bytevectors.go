package adaptertest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// int8Harness marks a harness whose envs use Int8Schema (a byte vector
// field) and the FAKE Int8Embedder.
type int8Harness struct{ Harness }

// Traits forwards the wrapped harness's traits.
func (h int8Harness) Traits() Traits { return traitsOf(h.Harness) }

// RunByteVectorTests runs the suite's probe, capability, filter and
// ranking groups on a target whose vector field stores int8 (byte)
// vectors, searched with the FAKE int8 embedder (oracles as in
// RunConformanceTests: Int8Schema keeps every cosine). Then it checks
// that a float embedder is not offered dense on the same field (and the
// probe says why), and who is blamed when the engine refuses a request:
// the sidecar for a query vector the field cannot take (-32603, with the
// engine's reason), the client for a document value its mapping refuses
// (-32602 on documents[i].meta). The Harness's MakeAdapter must map
// Schema.Vector.Element int8 to the engine's byte vector type.
func RunByteVectorTests(t *testing.T, newHarness HarnessMaker) {
	mk := func(ctx context.Context, t testing.TB) (Harness, error) {
		h, err := newHarness(ctx, t)
		if err != nil {
			return nil, err
		}
		return int8Harness{h}, nil
	}
	t.Run("Probe", func(t *testing.T) { testProbe(t, mk) })
	t.Run("Capabilities", func(t *testing.T) {
		t.Run("AdvertisedWorks", func(t *testing.T) { testAdvertisedWorks(t, mk) })
		t.Run("AbsentRejected", func(t *testing.T) { testAbsentRejected(t, mk) })
	})
	t.Run("Filter", func(t *testing.T) { testFilter(t, mk) })
	t.Run("Ranking", func(t *testing.T) { testRanking(t, mk) })
	t.Run("FloatEmbedderNotServed", func(t *testing.T) { testFloatEmbedderNotServed(t, mk) })
	t.Run("Blame", func(t *testing.T) { testBlame(t, mk) })
}

// testFloatEmbedderNotServed: with a float embedder of the right
// dimension, a byte field serves neither dense nor hybrid, and the probe
// reason for dense names the element types and what to configure.
func testFloatEmbedderNotServed(t *testing.T, mk HarnessMaker) {
	e := newEnv(t, mk, full)
	if !e.hasMode(rcp.ModeDense) || !e.hasMode(rcp.ModeHybrid) {
		t.Fatalf("int8 embedder on a byte field: modes %v, want dense and hybrid", e.caps.Retrieve.Modes)
	}
	opts := engineOptions(DefaultSchema(), full) // the float fake embedder
	eng, err := retrieval.NewEngine(context.Background(), e.a, opts)
	if err != nil {
		t.Fatal(err)
	}
	caps := eng.Capabilities()
	if caps.Retrieve == nil || slices.Contains(caps.Retrieve.Modes, rcp.ModeDense) || slices.Contains(caps.Retrieve.Modes, rcp.ModeHybrid) {
		t.Fatalf("float embedder on a byte field: retrieve %+v, want sparse only", caps.Retrieve)
	}
	i := slices.IndexFunc(eng.Explain(), func(r capability.Reason) bool { return r.Capability == "retrieve.modes.dense" })
	if i < 0 {
		t.Fatal("no probe reason for retrieve.modes.dense")
	}
	why := eng.Explain()[i].Why
	for _, want := range []string{"int8", "float", "embedder.element_type: int8"} {
		if !strings.Contains(why, want) {
			t.Errorf("dense reason %q does not say %q", why, want)
		}
	}
}

// decimalPlans is a FAKE sidecar bug: it plans every dense stage with
// 0.5 added to the query vector's first component, a vector a byte field
// cannot take, so the real engine refuses a request the sidecar built.
type decimalPlans struct{ adapters.Adapter }

func (d decimalPlans) Plan(req *adapters.SearchRequest) (*adapters.Plan, error) {
	if req.Stage == adapters.StageDense && len(req.Vector) > 0 {
		r := *req
		r.Vector = slices.Clone(req.Vector)
		r.Vector[0] += 0.5
		req = &r
	}
	return d.Adapter.Plan(req)
}

// testBlame: the engine refusing the sidecar's query vector is -32603
// with the engine's reason in data.detail, never -32602; refusing a
// client's document value is -32602 naming documents[i].meta.
func testBlame(t *testing.T, mk HarnessMaker) {
	e := newEnv(t, mk, full)
	t.Run("SidecarVector", func(t *testing.T) {
		eng, err := retrieval.NewEngine(context.Background(), decimalPlans{e.a}, engineOptions(e.schema, full))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		c := rcptest.NewClient(t, eng)
		t.Cleanup(c.Close)
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		_, re := c.Call(ctx, rcp.MethodRetrieve, P{"query": QueryCoffee, "k": 3, "mode": "dense"})
		wantError(t, re, rcp.CodeInternalError, "", "")
		if re.Data == nil || re.Data.Detail == "" || re.Data.Field != "" || strings.Contains(re.Data.Detail, "0.5") {
			t.Errorf("data %+v: want the engine's reason without the vector's values, and no field", re.Data)
		}
	})
	t.Run("ClientDocument", func(t *testing.T) {
		if e.caps.Index == nil || !e.caps.Index.Writable {
			t.Skip("not advertised: index.writable")
		}
		_, rerr := e.call(t, rcp.MethodIndexAdd, P{"documents": []map[string]any{
			doc("blame-ok", "a fine document"),
			{"id": "blame-bad", "text": "a year that is no number", "meta": map[string]any{"year": "not-a-number"}},
		}})
		wantError(t, rerr, rcp.CodeInvalidParams, "documents[1].meta", "")
	})
}
