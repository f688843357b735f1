package elasticsearch

// The engine's reranker against a FAKE Elasticsearch: a test server that
// deterministically serves recorded responses, the probe ones recorded
// from a real 8.19 node (testdata/probe) and the reranker ones taken from
// Elasticsearch's own source and tests (testdata/rerank/README.md), and
// records the request bodies it receives.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// rerankFake is the fake engine: routes maps "METHOD /path" (or "/path"
// for GET) to a fixture "probe/<name>" or "rerank/<name>"; bodies keeps
// the last body received per route.
type rerankFake struct {
	srv    *httptest.Server
	mu     sync.Mutex
	routes map[string]string
	bodies map[string][]byte
	count  map[string]int
	// seqs, when a route has one, serves its fixtures in turn (then routes).
	seqs map[string][]string
	// delay holds every POST back this long (timeouts).
	delay time.Duration
}

func newRerankFake(t *testing.T, over map[string]string) *rerankFake {
	t.Helper()
	f := &rerankFake{routes: map[string]string{}, bodies: map[string][]byte{}, count: map[string]int{}}
	for p, name := range aliasRoutes {
		f.routes[p] = "probe/es-" + fixtureVersion + "-" + name
	}
	f.routes["/_inference/rerank/_all"] = "rerank/inference-one"
	f.routes["/_license"] = "rerank/license-enterprise"
	f.routes["POST /_inference/rerank/my-rerank-model#check"] = "rerank/rerank-check"
	f.routes["POST /_inference/rerank/.rerank-v1-elasticsearch#check"] = "rerank/rerank-check"
	for k, v := range over {
		f.routes[k] = v
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve(t)))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *rerankFake) serve(t *testing.T) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Path
		if r.Method != http.MethodGet {
			key = r.Method + " " + r.URL.Path
		}
		body, _ := io.ReadAll(r.Body)
		var rr rerankRequest
		if r.Method == http.MethodPost && json.Unmarshal(body, &rr) == nil && rr.Query == checkQuery {
			key += "#check" // the probe's start-up check
		}
		f.mu.Lock()
		name, ok := f.routes[key]
		if q := f.seqs[key]; len(q) > 0 {
			name, ok, f.seqs[key] = q[0], true, q[1:]
		}
		f.bodies[key] = body
		f.count[key]++
		delay := f.delay
		f.mu.Unlock()
		if r.Method == http.MethodPost && delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if !ok {
			http.Error(w, `{"error":{"type":"fake_unrouted","reason":"`+key+`"},"status":500}`, 500)
			return
		}
		data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		meta, err2 := os.ReadFile(filepath.Join("testdata", name+".json.meta"))
		if err != nil || err2 != nil {
			t.Errorf("fixture %s: %v %v", name, err, err2)
			return
		}
		lines := strings.Split(strings.TrimSpace(string(meta)), "\n")
		status, _ := strconv.Atoi(lines[0])
		if len(lines) > 1 && lines[1] != "" {
			w.Header().Set("X-Elastic-Product", lines[1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(data)
	}
}

func (f *rerankFake) set(key, fixture string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[key] = fixture
}

// calls is how many requests key received.
func (f *rerankFake) calls(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[key]
}

// queue serves fixtures on key in turn, before its route.
func (f *rerankFake) queue(key string, fixtures ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seqs == nil {
		f.seqs = map[string][]string{}
	}
	f.seqs[key] = append(f.seqs[key], fixtures...)
}

func (f *rerankFake) body(key string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[key]
}

// open opens and probes an adapter on the fake's probe-fixture-a index.
func (f *rerankFake) open(t *testing.T, edit func(*Config)) *adapter {
	t.Helper()
	cfg := fixtureConfig("probe-fixture-a")
	cfg.URLs, cfg.PIT = []string{f.srv.URL}, false
	if edit != nil {
		edit(cfg)
	}
	a, err := open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if _, err := a.Probe(context.Background()); err != nil {
		t.Fatalf("probe: %v", err)
	}
	return a.(*adapter)
}

func TestProbeRerankerRecorded(t *testing.T) {
	for _, tc := range []struct {
		name      string
		routes    map[string]string
		edit      func(*Config)
		wantModel string
		wantWhy   string
	}{
		{name: "no inference API (real 8.19 integ-test node)", routes: map[string]string{
			"/_inference/rerank/_all": "probe/es-8.19.21-inference-rerank", "/_license": "probe/es-8.19.21-license"},
			wantWhy: "no inference API (GET /_inference/rerank/_all: HTTP 400)"},
		{name: "one endpoint, enterprise", wantModel: "my-rerank-model"},
		{name: "one endpoint, trial", routes: map[string]string{"/_license": "rerank/license-trial"}, wantModel: "my-rerank-model"},
		{name: "one endpoint, basic licence (real)", routes: map[string]string{"/_license": "probe/es-8.19.21-license"},
			wantWhy: `licence is "basic"`},
		{name: "no rerank endpoint", routes: map[string]string{"/_inference/rerank/_all": "rerank/inference-none"},
			wantWhy: "no inference endpoint of task_type rerank"},
		{name: "two endpoints, none chosen", routes: map[string]string{"/_inference/rerank/_all": "rerank/inference-two"},
			wantWhy: "2 inference endpoints of task_type rerank (.rerank-v1-elasticsearch, my-rerank-model): choose one with rerank_inference_id"},
		{name: "two endpoints, one chosen", routes: map[string]string{"/_inference/rerank/_all": "rerank/inference-two"},
			edit: func(c *Config) { c.RerankInferenceID = ".rerank-v1-elasticsearch" }, wantModel: ".rerank-v1-elasticsearch"},
		{name: "start-up check ranks the copy below", routes: map[string]string{"POST /_inference/rerank/my-rerank-model#check": "rerank/rerank-check-wrong"},
			wantWhy: "inference endpoint my-rerank-model failed the start-up check: the passage equal to the query scored 0.02, below an unrelated one (0.97)"},
		{name: "start-up check refused by the licence", routes: map[string]string{"POST /_inference/rerank/my-rerank-model#check": "rerank/search-licence"},
			wantWhy: "failed the start-up check: POST /_inference/rerank/my-rerank-model: the engine's licence does not allow its reranker"},
		{name: "start-up check endpoint gone", routes: map[string]string{"POST /_inference/rerank/my-rerank-model#check": "rerank/endpoint-missing"},
			wantWhy: "failed the start-up check: POST /_inference/rerank/my-rerank-model: HTTP 404"},
		{name: "chosen endpoint absent", edit: func(c *Config) { c.RerankInferenceID = "gone" },
			wantWhy: `rerank_inference_id "gone" is not an inference endpoint of task_type rerank (found: my-rerank-model)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newRerankFake(t, tc.routes).open(t, tc.edit)
			st, _ := a.probed()
			nr := st.ev.NativeReranker
			if nr == nil {
				t.Fatal("no reranker evidence")
			}
			if tc.wantModel == "" {
				if !strings.Contains(nr.Failed, tc.wantWhy) || st.ev.NativeRerankStage || st.rerankID != "" {
					t.Fatalf("failed %q (want %q), stage %t, id %q", nr.Failed, tc.wantWhy, st.ev.NativeRerankStage, st.rerankID)
				}
				return
			}
			if nr.Failed != "" || !slices.Equal(nr.Models, []string{tc.wantModel}) || nr.MaxCandidates != DefaultRerankMaxCandidates ||
				nr.Method != "cross-encoder" || !st.ev.NativeRerankStage || st.rerankID != tc.wantModel ||
				nr.Via != "Elasticsearch inference endpoint "+tc.wantModel {
				t.Fatalf("evidence %+v, stage %t, id %q", nr, st.ev.NativeRerankStage, st.rerankID)
			}
		})
	}
}

// engineOn builds the real retrieval Engine over the adapter, with no
// sidecar reranker: rerank comes from the engine or not at all.
func engineOn(t *testing.T, a adapters.Adapter) *retrieval.Engine {
	t.Helper()
	e, err := retrieval.NewEngine(context.Background(), a, retrieval.Options{Name: "t", Version: "0"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func rerankParams(t *testing.T, js string) *rcp.RerankCallParams {
	t.Helper()
	var p rcp.RerankCallParams
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// TestRerankMethodRecorded: the rerank method through POST
// _inference/rerank/<id>: the request body, scores back in passage order
// from the engine's best-first list, and the order cut to topN.
func TestRerankMethodRecorded(t *testing.T) {
	f := newRerankFake(t, map[string]string{"POST /_inference/rerank/my-rerank-model": "rerank/rerank-result"})
	a := f.open(t, nil)
	e := engineOn(t, a) // probes again
	if _, err := a.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	checks := f.count["POST /_inference/rerank/my-rerank-model#check"]
	f.mu.Unlock()
	if checks != 1 {
		t.Errorf("%d start-up checks over three probes, want 1 (a passed check is not repeated)", checks)
	}
	caps := e.Capabilities()
	if caps.Rerank == nil || !slices.Equal(caps.Rerank.Models, []string{"my-rerank-model"}) || !caps.Retrieve.RerankBuiltin {
		t.Fatalf("capabilities: rerank %+v, builtin %t", caps.Rerank, caps.Retrieve.RerankBuiltin)
	}
	res, err := e.Rerank(context.Background(), rerankParams(t, `{"query":"moon","passages":["a","b","c"],"topN":2}`))
	if err != nil {
		t.Fatal(err)
	}
	// rerank-result.json: index 2 → 0.94, index 0 → 0.61, index 1 → 0.07.
	if !slices.Equal(res.Scores, []float64{0.61, 0.07, 0.94}) || !slices.Equal(res.Order, []int{2, 0}) {
		t.Errorf("scores %v order %v", res.Scores, res.Order)
	}
	var sent map[string]any
	if err := json.Unmarshal(f.body("POST /_inference/rerank/my-rerank-model"), &sent); err != nil {
		t.Fatal(err)
	}
	if sent["query"] != "moon" || len(sent) != 2 || !slices.Equal(toStrings(sent["input"]), []string{"a", "b", "c"}) {
		t.Errorf("request body %v", sent)
	}
}

func toStrings(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i], _ = x.(string)
	}
	return out
}

// TestRerankErrorsRecorded: each engine failure becomes its precise RCP
// error, through the Engine's error boundary.
func TestRerankErrorsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fixture string
		delay   time.Duration
		code    rcp.Code
		option  string
	}{
		{name: "licence refused", fixture: "rerank/search-licence", code: rcp.CodeOptionUnsupported, option: "rerank"},
		{name: "endpoint gone", fixture: "rerank/endpoint-missing", code: rcp.CodeBackendUnavailable},
		{name: "engine timed out", fixture: "rerank/rerank-timeout", code: rcp.CodeTimeout},
		{name: "passage scored twice", fixture: "rerank/rerank-short", code: rcp.CodeInternalError},
		{name: "request deadline", fixture: "rerank/rerank-result", delay: 5 * time.Second, code: rcp.CodeTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRerankFake(t, map[string]string{"POST /_inference/rerank/my-rerank-model": tc.fixture})
			e := engineOn(t, f.open(t, nil))
			f.mu.Lock()
			f.delay = tc.delay
			f.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := e.Rerank(ctx, rerankParams(t, `{"query":"moon","passages":["a","b","c"]}`))
			var re *rcp.Error
			if !errors.As(err, &re) || re.Code != tc.code {
				t.Fatalf("error %v, want code %d", err, tc.code)
			}
			if tc.option != "" && (re.Data == nil || re.Data.Option != tc.option) {
				t.Errorf("error data %+v, want option %q", re.Data, tc.option)
			}
			if strings.Contains(re.Message, "non-compliant") || strings.Contains(re.Message, "my-rerank-model") {
				t.Errorf("engine text reached the client: %q", re.Message)
			}
		})
	}
}

func retrieveParams(t *testing.T, js string) *rcp.RetrieveParams {
	t.Helper()
	var p rcp.RetrieveParams
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// TestRetrieveRerankInEngineRecorded: retrieve's rerank stage runs as a
// text_similarity_reranker retriever around the lexical query (the body
// the fake receives is the golden plan), the hits keep the engine's
// reranked order cut to k, and their scores are labelled as the
// reranker's.
func TestRetrieveRerankInEngineRecorded(t *testing.T) {
	f := newRerankFake(t, map[string]string{"POST /probe-fixture-a/_search": "rerank/search-reranked"})
	e := engineOn(t, f.open(t, nil))
	res, err := e.Retrieve(context.Background(), retrieveParams(t,
		`{"query":"How often does the moon hide the sun?","mode":"sparse","k":2,"candidateK":50,"rerank":{"topN":10}}`))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var scores []float64
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
		scores = append(scores, h.Score)
		if len(h.Scores) != 1 || h.Scores[0] != (rcp.StageScore{Stage: "rerank", Score: h.Score}) {
			t.Errorf("hit %s scores %v", h.ID, h.Scores)
		}
	}
	if !slices.Equal(ids, []string{"doc_2", "doc_1"}) || !slices.Equal(scores, []float64{0.94, 0.61}) {
		t.Errorf("hits %v scores %v", ids, scores)
	}
	if res.Meta["scoreScale"] != string(rcp.ScaleUnbounded) || res.Meta["scoreFloor"] != nil {
		t.Errorf("score labels %+v", res.Meta)
	}
	if res.Usage == nil || res.Usage.Reranked == nil || *res.Usage.Reranked != 2 ||
		!containsNote(res.Usage.Notes, "text_similarity_reranker with inference endpoint my-rerank-model") {
		t.Errorf("usage %+v", res.Usage)
	}
	var sent map[string]any
	if err := json.Unmarshal(f.body("POST /probe-fixture-a/_search"), &sent); err != nil {
		t.Fatal(err)
	}
	tsr, _ := sent["retriever"].(map[string]any)["text_similarity_reranker"].(map[string]any)
	if tsr == nil || tsr["rank_window_size"] != 10.0 || tsr["field"] != "text" || tsr["inference_id"] != "my-rerank-model" ||
		tsr["inference_text"] != "How often does the moon hide the sun?" || sent["size"] != 10.0 || sent["query"] != nil {
		t.Errorf("search body %s", f.body("POST /probe-fixture-a/_search"))
	}
}

// TestRetrieveRerankLicenceRecorded: a licence withdrawn after the probe
// fails the reranked retrieve with -32005 naming the rerank option.
func TestRetrieveRerankLicenceRecorded(t *testing.T) {
	f := newRerankFake(t, map[string]string{"POST /probe-fixture-a/_search": "rerank/search-licence"})
	e := engineOn(t, f.open(t, nil))
	_, err := e.Retrieve(context.Background(), retrieveParams(t, `{"query":"moon","mode":"sparse","k":2,"rerank":{"topN":10}}`))
	var re *rcp.Error
	if !errors.As(err, &re) || re.Code != rcp.CodeOptionUnsupported || re.Data == nil || re.Data.Option != "rerank" {
		t.Fatalf("error %v", err)
	}
}

// TestRerankNotAdvertisedRecorded: with the real node's answers there is
// no rerank capability, probe says why, and the method is refused.
func TestRerankNotAdvertisedRecorded(t *testing.T) {
	f := newRerankFake(t, map[string]string{"/_inference/rerank/_all": "probe/es-8.19.21-inference-rerank", "/_license": "probe/es-8.19.21-license"})
	e := engineOn(t, f.open(t, nil))
	checkNoRerank(t, e)
}

// checkNoRerank asserts rerank is absent, explained, and refused.
func checkNoRerank(t *testing.T, e *retrieval.Engine) {
	t.Helper()
	if c := e.Capabilities(); c.Rerank != nil || c.Retrieve.RerankBuiltin {
		t.Fatalf("rerank advertised: %+v", c.Rerank)
	}
	var why capability.Reason
	for _, r := range e.Explain() {
		if r.Capability == "rerank" {
			why = r
		}
	}
	if why.Advertised || !strings.Contains(why.Why, "no inference API") {
		t.Errorf("probe reason %+v", why)
	}
	_, err := e.Rerank(context.Background(), rerankParams(t, `{"query":"q","passages":["a"]}`))
	var re *rcp.Error
	if !errors.As(err, &re) || re.Code != rcp.CodeCapabilityMissing {
		t.Errorf("rerank method: %v", err)
	}
}

// TestRetrieveRerankThroughAPIRecorded: a request the retriever cannot
// rerank exactly (unit document: one hit per document is chosen before
// the rerank stage) recalls plainly and reranks the recalled texts
// through POST _inference/rerank/<id>; the hits follow the reranker,
// keep their recall score next to the rerank score, and the notes name
// the path.
func TestRetrieveRerankThroughAPIRecorded(t *testing.T) {
	f := newRerankFake(t, map[string]string{"POST /probe-fixture-a/_search": "rerank/search-reranked",
		"POST /_inference/rerank/my-rerank-model": "rerank/rerank-result-two"})
	e := engineOn(t, f.open(t, func(c *Config) { c.DocumentIDField = "lang" }))
	res, err := e.Retrieve(context.Background(), retrieveParams(t,
		`{"query":"moon","mode":"sparse","k":2,"unit":"document","rerank":{"topN":10},"includeText":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 2 || res.Hits[0].ID != "doc_1" || res.Hits[0].Score != 0.8 || res.Hits[1].ID != "doc_2" || res.Hits[1].Score != 0.3 {
		t.Fatalf("hits %+v", res.Hits)
	}
	if len(res.Hits[0].Scores) != 2 {
		t.Errorf("scores %v, want the recall and the rerank score", res.Hits[0].Scores)
	}
	if !containsNote(res.Usage.Notes, "the engine's Elasticsearch inference endpoint my-rerank-model through its rerank API") {
		t.Errorf("notes %v", res.Usage.Notes)
	}
	if strings.Contains(string(f.body("POST /probe-fixture-a/_search")), "text_similarity_reranker") {
		t.Error("the search reranked in the engine")
	}
	var sent rerankRequest
	if err := json.Unmarshal(f.body("POST /_inference/rerank/my-rerank-model"), &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Query != "moon" || len(sent.Input) != 2 || !strings.HasPrefix(sent.Input[0], "The phases of the Moon") {
		t.Errorf("rerank request %+v", sent)
	}
}

// TestRerankLostAfterReprobeRecorded: when a later probe no longer finds
// the endpoint, the capabilities stay as advertised (§13.2) and both
// rerank paths answer -32010, retryable.
func TestRerankLostAfterReprobeRecorded(t *testing.T) {
	f := newRerankFake(t, nil)
	a := f.open(t, nil)
	e := engineOn(t, a)
	f.set("/_inference/rerank/_all", "rerank/inference-none")
	if _, err := a.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.Capabilities().Rerank == nil {
		t.Fatal("capabilities narrowed after a re-probe")
	}
	_, err1 := e.Rerank(context.Background(), rerankParams(t, `{"query":"q","passages":["a"]}`))
	_, err2 := e.Retrieve(context.Background(), retrieveParams(t, `{"query":"moon","mode":"sparse","k":2,"rerank":{"topN":10}}`))
	for i, err := range []error{err1, err2} {
		var re *rcp.Error
		if !errors.As(err, &re) || re.Code != rcp.CodeBackendUnavailable || re.Data == nil || re.Data.Retryable == nil || !*re.Data.Retryable {
			t.Errorf("path %d: %v", i, err)
		}
	}
}
