package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/elasticsearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/opensearch"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/internal/telemetry"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// fakeNativeReranker is a FAKE engine reranker over the memory engine:
// its probe reports a native reranker, and it scores passage i as i.
type fakeNativeReranker struct{ adapters.Adapter }

func (f fakeNativeReranker) Probe(ctx context.Context) (*capability.Evidence, error) {
	ev, err := f.Adapter.Probe(ctx)
	if err != nil {
		return nil, err
	}
	ev.NativeReranker = &capability.RerankerFacts{Method: "cross-encoder", Models: []string{"fake"}, MaxCandidates: 10, Proof: "fake"}
	return ev, nil
}

func (f fakeNativeReranker) NativeRerank(_ context.Context, _ string, passages []string) ([]float64, error) {
	out := make([]float64, len(passages))
	for i := range out {
		out[i] = float64(i)
	}
	return out, nil
}

// TestNativeRerankSpan: the engine decorator forwards a native rerank
// with an "engine rerank" span named by the engine's API (the operation
// ids of the Elasticsearch and OpenSearch REST specifications), so the
// Engine behind it serves the rerank method with the engine's reranker.
func TestNativeRerankSpan(t *testing.T) {
	for _, tc := range []struct {
		system, op string
		cfg        adapters.Described
	}{
		{"elasticsearch", "inference.inference", &elasticsearch.Config{}},
		{"opensearch", "ml.predict", &opensearch.Config{}},
	} {
		t.Run(tc.system, func(t *testing.T) {
			s := newStack(t, stackOpts{wrap: func(a adapters.Adapter) adapters.Adapter { return fakeNativeReranker{a} },
				endpoint: tc.cfg.Endpoint()})
			c := s.client(t)
			raw, rerr := c.Call(context.Background(), rcp.MethodRerank, map[string]any{"query": "q", "passages": []string{"a", "b", "c"}})
			if rerr != nil {
				t.Fatal(rerr)
			}
			var res rcp.RerankResult
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Order, []int{2, 1, 0}) {
				t.Errorf("order %v", res.Order)
			}
			sp := one(t, byName(s.rec.Ended()), "engine rerank")
			found := false
			for _, kv := range sp.Attributes() {
				if string(kv.Key) == "db.operation.name" && kv.Value.AsString() == tc.op {
					found = true
				}
			}
			if !found {
				t.Errorf("engine rerank span attributes %v, want db.operation.name %s", sp.Attributes(), tc.op)
			}
		})
	}
}

// TestNativeRerankAbsent: over an adapter without a native reranker the
// decorator says so.
func TestNativeRerankAbsent(t *testing.T) {
	tel, err := telemetry.New(context.Background(), telemetry.Options{ServiceName: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	a := tel.EngineAdapter(memory.New(memory.Options{}), "x", adapters.Endpoint{})
	nr, ok := a.(adapters.NativeReranker)
	if !ok {
		t.Fatal("the decorator does not forward adapters.NativeReranker")
	}
	if _, err := nr.NativeRerank(context.Background(), "q", []string{"a"}); !errors.Is(err, adapters.ErrNoNativeRerank) {
		t.Errorf("err %v", err)
	}
}
