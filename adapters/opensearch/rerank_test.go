package opensearch

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/reranker/rerankertest"
)

// TestPredictBodyGolden: the _predict body is the text-similarity input
// ml-commons documents, byte for byte (the golden file is written by hand
// from that shape, not generated; TestRecordedPredictRequest compares it
// with the engine's own example), on the text_similarity route.
func TestPredictBodyGolden(t *testing.T) {
	got, err := predictBody(`solar "panels"`, []string{"Panels on roofs.", "Wind turbines."})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "rerank_predict.golden.json"), append(got, '\n'))
	m := &mlReranker{model: "a/b"}
	if p := m.predictPath(); p != "/_plugins/_ml/_predict/text_similarity/a%2Fb" {
		t.Errorf("predict path %q: the model id is not escaped", p)
	}
}

func TestConfigRerank(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model string
		max   int
		err   string
	}{
		{"none", "", 0, ""},
		{"engine id", "lLkx4IwB2KscXH0Iu2Xz", 0, ""},
		{"with limit", "m-1_x", 250, ""},
		{"limit without model", "", 10, "rerank_max_candidates needs rerank_model"},
		{"path in id", "../_cluster", 0, "not an ml-commons model id"},
		{"query in id", "m?x=1", 0, "not an ml-commons model id"},
		{"too long", strings.Repeat("a", 129), 0, "not an ml-commons model id"},
		{"negative limit", "m", -1, "rerank_max_candidates must be in"},
		{"limit too high", "m", MaxRerankCandidates + 1, "rerank_max_candidates must be in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.URLs, c.Index, c.RerankModel, c.RerankMaxCandidates = []string{"http://127.0.0.1:9200"}, "i", tc.model, tc.max
			err := c.Validate()
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Validate() = %v, want %q", err, tc.err)
			}
		})
	}
}

// openFake opens an adapter whose URL is the fake ml-commons
// (rerankertest.MLServer), configured with model.
func openFake(t *testing.T, f *rerankertest.MLServer, model string, maxCand int) *mlReranker {
	t.Helper()
	return openURL(t, f.URL, model, maxCand).ml
}

// openURL opens an adapter on url configured with model; its ml field is
// the native reranker.
func openURL(t *testing.T, url, model string, maxCand int) *adapter {
	t.Helper()
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.RerankModel, cfg.RerankMaxCandidates = []string{url}, "i", model, maxCand
	a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ad := a.(*adapter)
	if ad.ml == nil {
		t.Fatal("no native reranker with rerank_model set")
	}
	return ad
}

// TestNativeRerankerAbsent: without rerank_model the probe reports no
// native reranker and NativeRerank is adapters.ErrNoNativeRerank, with no
// call to the engine (the URL refuses connections).
func TestNativeRerankerAbsent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index = []string{"http://127.0.0.1:1"}, "i"
	a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ad := a.(*adapter)
	if f := ad.probeReranker(context.Background()); f != nil {
		t.Errorf("native reranker evidence %+v without rerank_model", f)
	}
	if _, err := ad.NativeRerank(context.Background(), "q", []string{"a"}); !errors.Is(err, adapters.ErrNoNativeRerank) {
		t.Errorf("NativeRerank without rerank_model = %v, want adapters.ErrNoNativeRerank", err)
	}
}

// TestNativeRerankFake scores through the fake ml-commons
// (rerankertest.MLServer) in both answer
// shapes; the expected scores are the oracle (rerankertest.Overlap) on
// the passages, computed here.
func TestNativeRerankFake(t *testing.T) {
	f := rerankertest.NewMLServer(t, "model-1", "")
	a := openURL(t, f.URL, "model-1", 4)
	n := a.ml
	ev := a.probeReranker(context.Background())
	if ev == nil || ev.Failed != "" || ev.Method != "cross-encoder" || ev.MaxCandidates != 4 || !slices.Equal(ev.Models, []string{"model-1"}) ||
		ev.Via != "OpenSearch ml-commons model model-1" || !strings.Contains(ev.Proof, "_predict") {
		t.Fatalf("evidence %+v", ev)
	}
	// A re-probe reads the model again but does not pay for inference again.
	if again := a.probeReranker(context.Background()); again.Failed != "" || f.Predicts.Load() != 1 {
		t.Errorf("re-probe: %+v, %d _predict calls in all, want 1", again, f.Predicts.Load())
	}
	f.Deleted.Store(true)
	if gone := a.probeReranker(context.Background()); !strings.Contains(gone.Failed, "is not on the engine") || gone.Models != nil {
		t.Errorf("re-probe after the model was deleted: %+v", gone)
	}
	f.Deleted.Store(false)
	q := "solar panels on roofs"
	passages := []string{"wind turbines at sea", "solar panels", "panels on roofs of solar farms", "roofs"}
	for _, local := range []bool{false, true} {
		f.Local.Store(local)
		got, err := a.NativeRerank(context.Background(), q, passages)
		if err != nil {
			t.Fatalf("local=%v: %v", local, err)
		}
		for i, p := range passages {
			if want := rerankertest.Overlap(q, p); got[i] != want {
				t.Errorf("local=%v: score[%d] = %g, want %g", local, i, got[i], want)
			}
		}
	}
	proof, err := n.check(context.Background())
	if err != nil || !strings.Contains(proof, "model-1") || !strings.Contains(proof, "_predict") {
		t.Errorf("Check = %q, %v", proof, err)
	}
	calls := f.Predicts.Load()
	if _, err := n.rerank(context.Background(), q, make([]string, 5)); rcpCode(err) != rcp.CodeInvalidParams || f.Predicts.Load() != calls {
		t.Errorf("5 passages over a limit of 4: %v (predict calls %d → %d)", err, calls, f.Predicts.Load())
	}
}

func rcpCode(err error) rcp.Code {
	var re *rcp.Error
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

// TestNativeRerankErrors: each failure of the model is a precise RCP
// error, and the engine's reason (which may echo passages) is not.
func TestNativeRerankErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		set       func(*rerankertest.MLServer)
		code      rcp.Code
		retryable bool
		msg       string
	}{
		{"model deleted", func(f *rerankertest.MLServer) { f.Deleted.Store(true) }, rcp.CodeBackendUnavailable, false, "is not on the engine (HTTP 404 status_exception)"},
		{"remote upstream down", func(f *rerankertest.MLServer) { f.Status.Store(http.StatusBadGateway) }, rcp.CodeBackendUnavailable, true, "failed on the engine (HTTP 502"},
		{"rate limited", func(f *rerankertest.MLServer) { f.Status.Store(http.StatusTooManyRequests) }, rcp.CodeRateLimited, true, "rate limited"},
		{"undeployed", func(f *rerankertest.MLServer) { f.Status.Store(http.StatusBadRequest) }, rcp.CodeBackendUnavailable, false, "refused the call (HTTP 400"},
		{"score missing", func(f *rerankertest.MLServer) { f.Short.Store(true) }, rcp.CodeInternalError, false, "1 scores for 2 passages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := rerankertest.NewMLServer(t, "m", "")
			n := openFake(t, f, "m", 0)
			tc.set(f)
			_, err := n.rerank(context.Background(), "q", []string{"secret passage a", "b"})
			var re *rcp.Error
			if !errors.As(err, &re) || re.Code != tc.code || !strings.Contains(re.Message, tc.msg) {
				t.Fatalf("error %v, want %d containing %q", err, tc.code, tc.msg)
			}
			if got := re.Data != nil && re.Data.Retryable != nil && *re.Data.Retryable; got != tc.retryable {
				t.Errorf("retryable %v, want %v", got, tc.retryable)
			}
			if strings.Contains(re.Message, "echoed") {
				t.Errorf("the engine's reason leaked: %s", re.Message)
			}
			if _, err := n.check(context.Background()); err == nil {
				t.Error("Check passed on a failing model")
			}
		})
	}
	// An engine that is gone: -32010, retryable.
	f0 := rerankertest.NewMLServer(t, "m", "")
	n0 := openFake(t, f0, "m", 0)
	f0.Close()
	var re *rcp.Error
	if _, err := n0.rerank(context.Background(), "q", []string{"a"}); !errors.As(err, &re) || re.Code != rcp.CodeBackendUnavailable ||
		re.Data == nil || re.Data.Retryable == nil || !*re.Data.Retryable || strings.Contains(re.Message, "127.0.0.1") {
		t.Errorf("engine gone: %v, want retryable -32010 without the URL", err)
	}
	// A model that ranks backwards fails the start-up check.
	f := rerankertest.NewMLServer(t, "m", "")
	n := openFake(t, f, "m", 0)
	f.Invert.Store(true)
	if _, err := n.check(context.Background()); err == nil || !strings.Contains(err.Error(), "below an unrelated one") {
		t.Errorf("inverted model: Check = %v", err)
	}
}

// TestNativeRerankNoPlugin: on the real node, which has no ml-commons,
// the start-up check fails and says why.
func TestNativeRerankNoPlugin(t *testing.T) {
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.URLs, cfg.RerankModel = []string{base}, "lLkx4IwB2KscXH0Iu2Xz"
	cfg.Index = newLiveIndex(ctx, t, base, map[string]any{"properties": map[string]any{"text": map[string]any{"type": "text"}}})
	a, err := Factory.Open(ctx, cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ev, err := a.Probe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if nr := ev.NativeReranker; nr == nil || !strings.Contains(nr.Failed, "no ml-commons plugin") || nr.Models != nil {
		t.Errorf("evidence on a node without ml-commons: %+v", nr)
	}
}
