package opensearch

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/reranker/rerankertest"
)

// The files under testdata/mlcommons are answers of the ml-commons plugin
// taken from its own repository (testdata/mlcommons/README.md names the
// file and symbol of each). The tests below read them with the adapter's
// own code; the expected values are copied by hand from those files and
// from the engine's documentation around them, not computed by the code
// under test.

func mlRecorded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "mlcommons", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// order is the passage indexes by descending score.
func order(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx
}

// TestRecordedPredictAnswers decodes each recorded _predict answer with
// the adapter's parser. The Cohere answer's order is the one the engine's
// own tutorial shows its rerank pipeline returning for the same answer
// (Washington, capital punishment, Carson City, Mariana Islands).
func TestRecordedPredictAnswers(t *testing.T) {
	for _, tc := range []struct {
		file  string
		n     int
		want  []float64
		order []int
		err   string
	}{
		{"predict_remote_cohere_rerank.json", 4, []float64{0.10194652, 0.0721122, 0.98005307, 0.27904198}, []int{2, 3, 0, 1}, ""},
		{"predict_remote_two_docs.json", 2, []float64{0.054037678986787796, 0.5877784490585327}, []int{1, 0}, ""},
		{"predict_local_text_similarity.json", 4, []float64{-5.0543113, -10.235613, 8.512603, -1.2344959}, []int{2, 3, 0, 1}, ""},
		// The same answers for a different number of passages are refused.
		{"predict_remote_cohere_rerank.json", 5, nil, nil, "4 scores for 5 passages"},
		{"predict_local_text_similarity.json", 3, nil, nil, "4 scores for 3 passages"},
		// Error documents are not score lists.
		{"error_model_not_found.json", 1, nil, nil, "0 scores for 1 passages"},
		// A remote model without a post-process function answers the
		// upstream's JSON as dataAsMap (ModelTensor.toXContent), no data.
		{`{"inference_results":[{"output":[{"name":"response","dataAsMap":{"results":[{"index":0,"relevance_score":0.9}]}}],"status_code":200}]}`, 1, nil, nil, "an output without data"},
	} {
		name := tc.file
		if strings.HasPrefix(name, "{") {
			name = "inline"
		}
		t.Run(fmt.Sprintf("%s/%d", name, tc.n), func(t *testing.T) {
			m := &mlReranker{model: "m"}
			raw := []byte(tc.file)
			if name != "inline" {
				raw = mlRecorded(t, tc.file)
			}
			got, err := m.decode(raw, tc.n)
			if tc.err != "" {
				var re *rcp.Error
				if !errors.As(err, &re) || re.Code != rcp.CodeInternalError || !strings.Contains(re.Message, tc.err) {
					t.Fatalf("decode = %v, %v; want -32603 %q", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("scores %v, want %v", got, tc.want)
			}
			if o := order(got); fmt.Sprint(o) != fmt.Sprint(tc.order) {
				t.Errorf("order %v, want %v", o, tc.order)
			}
		})
	}
}

// TestRecordedLocalByteBuffer: in the recorded local answer each tensor's
// byte_buffer holds the same float32 as its data — the file is internally
// consistent, so data[0] (what the adapter reads) is the model's score.
func TestRecordedLocalByteBuffer(t *testing.T) {
	var out struct {
		InferenceResults []struct {
			Output []struct {
				Data       []float64 `json:"data"`
				ByteBuffer struct {
					Array []byte `json:"array"`
					Order string `json:"order"`
				} `json:"byte_buffer"`
			} `json:"output"`
		} `json:"inference_results"`
	}
	if err := json.Unmarshal(mlRecorded(t, "predict_local_text_similarity.json"), &out); err != nil {
		t.Fatal(err)
	}
	for i, r := range out.InferenceResults {
		o := r.Output[0]
		if o.ByteBuffer.Order != "LITTLE_ENDIAN" || len(o.ByteBuffer.Array) != 4 {
			t.Fatalf("result %d: byte_buffer %+v", i, o.ByteBuffer)
		}
		if f := math.Float32frombits(binary.LittleEndian.Uint32(o.ByteBuffer.Array)); float64(f) != float64(float32(o.Data[0])) {
			t.Errorf("result %d: byte_buffer %g, data %g", i, f, o.Data[0])
		}
	}
}

// TestRecordedPredictRequest: the adapter's body equals, as JSON, the
// text-similarity request in the engine's tutorial.
func TestRecordedPredictRequest(t *testing.T) {
	got, err := predictBody("I like you", []string{"I hate you", "I love you"})
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mlRecorded(t, "predict_request.json"), &b); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("body %s, recorded %v", got, b)
	}
}

// replay is a test server that replays recorded engine answers
// deterministically: get for GET /_plugins/_ml/models/<model>, predict
// for POST /_plugins/_ml/_predict/text_similarity/<model>, each with the
// "status" the file carries (200 when none); any other request is a 404
// without a body, so a wrong route fails the test.
type replay struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newReplay(t *testing.T, model, get, predict string) *replay {
	t.Helper()
	answers := map[string][]byte{}
	if get != "" {
		answers["GET /_plugins/_ml/models/"+model] = mlRecorded(t, get)
	}
	if predict != "" {
		answers["POST /_plugins/_ml/_predict/text_similarity/"+model] = mlRecorded(t, predict)
	}
	r := &replay{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, ok := answers[req.Method+" "+req.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if req.Method == http.MethodPost {
			b, _ := io.ReadAll(req.Body)
			r.mu.Lock()
			r.bodies = append(r.bodies, b)
			r.mu.Unlock()
		}
		var st struct {
			Status int `json:"status"`
		}
		_ = json.Unmarshal(body, &st)
		if st.Status == 0 {
			st.Status = http.StatusOK
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(st.Status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(r.Close)
	return r
}

// TestRecordedRerank: Rerank over the recorded answers, through the
// adapter's HTTP client, on the text_similarity _predict route.
func TestRecordedRerank(t *testing.T) {
	const model = "lLkx4IwB2KscXH0Iu2Xz"
	passages := []string{
		"Carson City is the capital city of the American state of Nevada.",
		"The Commonwealth of the Northern Mariana Islands is a group of islands in the Pacific Ocean. Its capital is Saipan.",
		"Washington, D.C. (also known as simply Washington or D.C., and officially as the District of Columbia) is the capital of the United States. It is a federal district.",
		"Capital punishment (the death penalty) has existed in the United States since beforethe United States was a country. As of 2017, capital punishment is legal in 30 of the 50 states.",
	}
	for _, tc := range []struct {
		predict   string
		want      []float64
		code      rcp.Code
		retryable bool
		msg       string
	}{
		{"predict_remote_cohere_rerank.json", []float64{0.10194652, 0.0721122, 0.98005307, 0.27904198}, 0, false, ""},
		{"predict_local_text_similarity.json", []float64{-5.0543113, -10.235613, 8.512603, -1.2344959}, 0, false, ""},
		{"error_model_not_found.json", nil, rcp.CodeBackendUnavailable, false, "is not on the engine (HTTP 404 status_exception): deleted or never registered"},
		{"error_model_not_deployed.json", nil, rcp.CodeBackendUnavailable, false, "refused the call (HTTP 400 illegal_argument_exception): not deployed, or its connector failed"},
	} {
		t.Run(tc.predict, func(t *testing.T) {
			r := newReplay(t, model, "", tc.predict)
			n := openURL(t, r.URL, model, 0).ml
			got, err := n.rerank(context.Background(), "What is the capital of the United States?", passages)
			if tc.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("scores %v, want %v", got, tc.want)
				}
			} else {
				var re *rcp.Error
				if !errors.As(err, &re) || re.Code != tc.code || !strings.Contains(re.Message, tc.msg) {
					t.Fatalf("Rerank = %v; want %d %q", err, tc.code, tc.msg)
				}
				if retry := re.Data != nil && re.Data.Retryable != nil && *re.Data.Retryable; retry != tc.retryable {
					t.Errorf("retryable %v, want %v", retry, tc.retryable)
				}
				// The engine's reason is not repeated.
				if strings.Contains(re.Message, "Failed to find") || strings.Contains(re.Message, "not ready yet") {
					t.Errorf("the engine's reason leaked: %s", re.Message)
				}
			}
			if len(r.bodies) != 1 {
				t.Fatalf("%d _predict calls, want 1", len(r.bodies))
			}
			var body struct {
				QueryText string   `json:"query_text"`
				TextDocs  []string `json:"text_docs"`
			}
			if err := json.Unmarshal(r.bodies[0], &body); err != nil || body.QueryText == "" || len(body.TextDocs) != len(passages) {
				t.Errorf("request body %s", r.bodies[0])
			}
		})
	}
}

// TestRecordedCheck: the start-up check over recorded model documents;
// its _predict answer is the engine tutorial's two-passage answer (the
// second passage scored higher, as the check requires).
func TestRecordedCheck(t *testing.T) {
	const model = "lLkx4IwB2KscXH0Iu2Xz"
	for _, tc := range []struct {
		get, predict string
		proof, err   string
	}{
		{"get_model_remote.json", "predict_remote_two_docs.json", `"cohere rerank model", algorithm REMOTE, state DEPLOYED`, ""},
		{"get_model_text_similarity.json", "predict_remote_two_docs.json", "algorithm TEXT_SIMILARITY, state DEPLOYED", ""},
		{"get_model_text_embedding.json", "predict_remote_two_docs.json", "", `algorithm "TEXT_EMBEDDING" is not a reranker`},
		{"error_get_model_not_found.json", "", "", "is not on the engine (HTTP 404 status_exception)"},
		{"get_model_remote.json", "error_model_not_found.json", "", "start-up _predict: rcp BackendUnavailable: rerank model " + model + " is not on the engine (HTTP 404 status_exception)"},
		{"get_model_text_similarity.json", "predict_remote_cohere_rerank.json", "", "4 scores for 2 passages"},
	} {
		t.Run(tc.get+"+"+tc.predict, func(t *testing.T) {
			r := newReplay(t, model, tc.get, tc.predict)
			n := openURL(t, r.URL, model, 0).ml
			proof, err := n.check(context.Background())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Check = %q, %v; want error %q", proof, err, tc.err)
				}
				return
			}
			if err != nil || !strings.Contains(proof, tc.proof) {
				t.Fatalf("Check = %q, %v; want %q", proof, err, tc.proof)
			}
		})
	}
	// A local model that is not deployed fails before any _predict.
	var doc map[string]any
	if err := json.Unmarshal(mlRecorded(t, "get_model_text_similarity.json"), &doc); err != nil {
		t.Fatal(err)
	}
	doc["model_state"] = "UNDEPLOYED"
	b, _ := json.Marshal(doc)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet {
			t.Errorf("%s %s before the state was read", req.Method, req.URL.Path)
		}
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	n := openURL(t, srv.URL, model, 0).ml
	if _, err := n.check(context.Background()); err == nil || !strings.Contains(err.Error(), `local text-similarity model in state "UNDEPLOYED"`) {
		t.Errorf("undeployed local model: Check = %v", err)
	}
}

// skeleton is the structure of a JSON value: objects by their keys, in
// order, arrays by their first element, scalars by their kind.
func skeleton(t *testing.T, raw []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var sb strings.Builder
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				sb.WriteString("{")
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					fmt.Fprintf(&sb, "%s:", k)
					if err := walk(); err != nil {
						return err
					}
					sb.WriteString(",")
				}
				_, err = dec.Token()
				sb.WriteString("}")
				return err
			case '[':
				sb.WriteString("[")
				first := true
				for dec.More() {
					mark := sb.Len()
					if err := walk(); err != nil {
						return err
					}
					if !first { // arrays are homogeneous: keep the first element only
						s := sb.String()[:mark]
						sb.Reset()
						sb.WriteString(s)
					}
					first = false
				}
				_, err = dec.Token()
				sb.WriteString("]")
				return err
			}
		case json.Number:
			sb.WriteString("number")
		case string:
			sb.WriteString("string")
		case bool:
			sb.WriteString("bool")
		case nil:
			sb.WriteString("null")
		}
		return nil
	}
	if err := walk(); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	return sb.String()
}

// TestFakeMatchesRecorded: the fake ml-commons (rerankertest.MLServer)
// answers in the recorded shapes — the same structure, key for key and in
// the engine's key order, for _predict answers; the same bytes (up to
// indentation) for error documents; and a model document whose fields are
// all the engine's, with the engine's types.
func TestFakeMatchesRecorded(t *testing.T) {
	const model = "lLkx4IwB2KscXH0Iu2Xz"
	f := rerankertest.NewMLServer(t, model, "")
	call := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, f.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, b
	}
	compact := func(b []byte) string {
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		return buf.String()
	}
	predict := "/_plugins/_ml/_predict/text_similarity/" + model
	body := string(mlRecorded(t, "predict_request.json"))
	four := `{"query_text":"capital","text_docs":["a","b capital","c","d"]}`

	for _, tc := range []struct {
		name          string
		local, undepl bool
		path, body    string
		file          string
		status        int
		bytes         bool
	}{
		{"remote predict", false, false, predict, four, "predict_remote_cohere_rerank.json", 200, false},
		{"remote predict, two passages", false, false, predict, body, "predict_remote_two_docs.json", 200, false},
		{"local predict", true, false, predict, four, "predict_local_text_similarity.json", 200, false},
		{"missing model predict", false, false, "/_plugins/_ml/_predict/text_similarity/other", body, "error_model_not_found.json", 404, true},
		{"undeployed local predict", true, true, predict, body, "error_model_not_deployed.json", 400, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.Local.Store(tc.local)
			f.Undeployed.Store(tc.undepl)
			st, got := call(http.MethodPost, tc.path, tc.body)
			want := mlRecorded(t, tc.file)
			if st != tc.status {
				t.Errorf("status %d, want %d", st, tc.status)
			}
			if tc.bytes {
				if compact(got) != compact(want) {
					t.Errorf("fake answered\n%s\nrecorded\n%s", compact(got), compact(want))
				}
				return
			}
			if g, w := skeleton(t, got), skeleton(t, want); g != w {
				t.Errorf("fake's structure\n%s\nrecorded\n%s", g, w)
			}
		})
	}
	f.Local.Store(false)
	f.Undeployed.Store(false)
	if st, got := call(http.MethodGet, "/_plugins/_ml/models/"+model, ""); st != 200 {
		t.Errorf("GET model: %d %s", st, got)
	} else {
		checkModelFields(t, got, mlRecorded(t, "get_model_remote.json"))
	}
	f.Local.Store(true)
	if _, got := call(http.MethodGet, "/_plugins/_ml/models/"+model, ""); true {
		checkModelFields(t, got, mlRecorded(t, "get_model_text_similarity.json"))
	}
	f.Deleted.Store(true)
	if st, got := call(http.MethodGet, "/_plugins/_ml/models/"+model, ""); st != 404 || compact(got) != compact(mlRecorded(t, "error_get_model_not_found.json")) {
		t.Errorf("GET deleted model: %d %s", st, got)
	}
}

// checkModelFields: every field of the fake's model document is in the
// recorded one with the same JSON type, and the fields the adapter reads
// have the recorded values.
func checkModelFields(t *testing.T, fake, rec []byte) {
	t.Helper()
	var a, b map[string]any
	if err := json.Unmarshal(fake, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rec, &b); err != nil {
		t.Fatal(err)
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok {
			t.Errorf("fake model field %q is not in the recorded document", k)
		} else if fmt.Sprintf("%T", v) != fmt.Sprintf("%T", w) {
			t.Errorf("field %q: fake %T, recorded %T", k, v, w)
		}
	}
	for _, k := range []string{"name", "algorithm", "model_state", "model_id"} {
		if a[k] != b[k] {
			t.Errorf("field %q: fake %v, recorded %v", k, a[k], b[k])
		}
	}
}
