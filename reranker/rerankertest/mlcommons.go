package rerankertest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// MLServer is a FAKE OpenSearch ml-commons model API for one model id. It
// answers deterministically, in the shapes the engine writes (the
// OpenSearch adapter's testdata/mlcommons holds the recorded engine
// answers, and a test there compares the two):
//
//   - GET /_plugins/_ml/models/<id>: the model document of
//     MLModel.toXContent, algorithm REMOTE (or TEXT_SIMILARITY when Local
//     is set), model_state DEPLOYED (or UNDEPLOYED when Undeployed is).
//   - POST /_plugins/_ml/_predict/text_similarity/<id> with
//     {"query_text", "text_docs"}: one "similarity" tensor per passage,
//     scored by Overlap, in the ModelTensorOutput shape — one inference
//     result with one output per passage and status_code 200 as the
//     Cohere rerank post-process function writes it, or, when Local is
//     set, one inference result per passage with the tensor's byte_buffer
//     as a local TEXT_SIMILARITY model writes it.
//   - an unknown model id: 404 status_exception "Failed to find model"
//     ("... with the provided model id: <id>" on GET);
//     an undeployed local model's _predict: 400 illegal_argument_exception
//     "Model not ready yet. Please deploy the model first.".
//
// Every request outside /_plugins/_ml/ goes to the upstream given to
// NewMLServer (a real OpenSearch node), so searches run on the real engine
// while the model is fake.
type MLServer struct {
	*httptest.Server
	model string
	// Local makes the model a local TEXT_SIMILARITY cross-encoder;
	// otherwise it is a remote model through the Cohere rerank
	// post-process function.
	Local atomic.Bool
	// Deleted answers every model request as for an unknown model id.
	Deleted atomic.Bool
	// Undeployed reports model_state UNDEPLOYED and, for a Local model,
	// refuses _predict as the engine does.
	Undeployed atomic.Bool
	// Status, when set, answers _predict with that status and an error
	// document whose reason contains "echoed passages".
	Status atomic.Int32
	// Invert negates every score; Short drops the last one.
	Invert, Short atomic.Bool
	// Predicts counts _predict calls.
	Predicts atomic.Int32
}

// NewMLServer starts the fake for model; upstream, when not empty, is the
// base URL other requests are forwarded to. It is closed when the test
// ends.
func NewMLServer(t testing.TB, model, upstream string) *MLServer {
	t.Helper()
	f := &MLServer{model: model}
	var proxy http.Handler = http.NotFoundHandler()
	if upstream != "" {
		u, err := url.Parse(upstream)
		if err != nil {
			t.Fatal(err)
		}
		proxy = httputil.NewSingleHostReverseProxy(u)
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/_plugins/_ml/") {
			proxy.ServeHTTP(w, r)
			return
		}
		f.serveML(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// The engine's JSON, field for field in the order its toXContent writes
// them.
type (
	mlCause struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}
	mlErrorBody struct {
		Error struct {
			RootCause []mlCause `json:"root_cause"`
			mlCause
		} `json:"error"`
		Status int `json:"status"`
	}
	mlByteBuffer struct {
		Array string `json:"array"`
		Order string `json:"order"`
	}
	mlTensor struct {
		Name       string        `json:"name"`
		DataType   string        `json:"data_type"`
		Shape      []int         `json:"shape"`
		Data       []float64     `json:"data"`
		ByteBuffer *mlByteBuffer `json:"byte_buffer,omitempty"`
	}
	mlTensors struct {
		Output     []mlTensor `json:"output,omitempty"`
		StatusCode int        `json:"status_code,omitempty"`
	}
	mlOutput struct {
		InferenceResults []mlTensors `json:"inference_results,omitempty"`
	}
	mlModel struct {
		Name        string `json:"name"`
		Algorithm   string `json:"algorithm"`
		Version     string `json:"model_version"`
		ModelState  string `json:"model_state"`
		CreatedTime int64  `json:"created_time"`
		ModelID     string `json:"model_id"`
	}
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// mlError writes OpenSearch's error document for an exception of type
// typ (OpenSearchStatusException is "status_exception").
func mlError(w http.ResponseWriter, status int, typ, reason string) {
	var e mlErrorBody
	e.Error.RootCause = []mlCause{{Type: typ, Reason: reason}}
	e.Error.mlCause = mlCause{Type: typ, Reason: reason}
	e.Status = status
	writeJSON(w, status, e)
}

// similarity is one score as the engine writes it; a local model's
// tensor carries its float32 bytes too (DJL's little-endian buffer).
func similarity(s float64, local bool) mlTensor {
	t := mlTensor{Name: "similarity", DataType: "FLOAT32", Shape: []int{1}, Data: []float64{s}}
	if local {
		b := binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(s)))
		t.ByteBuffer = &mlByteBuffer{Array: base64.StdEncoding.EncodeToString(b), Order: "LITTLE_ENDIAN"}
	}
	return t
}

func (f *MLServer) serveML(w http.ResponseWriter, r *http.Request) {
	get := "/_plugins/_ml/models/" + f.model
	predict := "/_plugins/_ml/_predict/text_similarity/" + f.model
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/_plugins/_ml/models/") && (r.URL.Path != get || f.Deleted.Load()):
		id := strings.TrimPrefix(r.URL.Path, "/_plugins/_ml/models/")
		mlError(w, http.StatusNotFound, "status_exception", "Failed to find model with the provided model id: "+id)
		return
	case r.URL.Path != get && r.URL.Path != predict, f.Deleted.Load():
		mlError(w, http.StatusNotFound, "status_exception", "Failed to find model")
		return
	case r.Method == http.MethodGet && r.URL.Path == get:
		m := mlModel{Name: "cohere rerank model", Algorithm: "REMOTE", Version: "1", ModelState: "DEPLOYED", CreatedTime: 1736856574435, ModelID: f.model}
		if f.Local.Load() {
			m.Name, m.Algorithm = "huggingface/cross-encoders/ms-marco-MiniLM-L-6-v2", "TEXT_SIMILARITY"
		}
		if f.Undeployed.Load() {
			m.ModelState = "UNDEPLOYED"
		}
		writeJSON(w, http.StatusOK, m)
		return
	case r.Method != http.MethodPost || r.URL.Path != predict:
		mlError(w, http.StatusMethodNotAllowed, "illegal_argument_exception", "unexpected request")
		return
	}
	f.Predicts.Add(1)
	if s := f.Status.Load(); s != 0 {
		mlError(w, int(s), "status_exception", "Error from remote service: echoed passages")
		return
	}
	local := f.Local.Load()
	if local && f.Undeployed.Load() {
		mlError(w, http.StatusBadRequest, "illegal_argument_exception", "Model not ready yet. Please deploy the model first.")
		return
	}
	var req struct {
		QueryText *string  `json:"query_text"`
		TextDocs  []string `json:"text_docs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		mlError(w, http.StatusBadRequest, "parsing_exception", "bad body")
		return
	}
	// TextSimilarityMLInput's own checks.
	if len(req.TextDocs) == 0 {
		mlError(w, http.StatusBadRequest, "illegal_argument_exception", "No text documents were provided")
		return
	}
	if req.QueryText == nil {
		mlError(w, http.StatusBadRequest, "illegal_argument_exception", "No query text was provided")
		return
	}
	outputs := make([]mlTensor, 0, len(req.TextDocs))
	for _, d := range req.TextDocs {
		s := Overlap(*req.QueryText, d)
		if f.Invert.Load() {
			s = -s
		}
		outputs = append(outputs, similarity(s, local))
	}
	if f.Short.Load() {
		outputs = outputs[:len(outputs)-1]
	}
	var out mlOutput
	if local {
		for _, o := range outputs {
			out.InferenceResults = append(out.InferenceResults, mlTensors{Output: []mlTensor{o}})
		}
	} else {
		out.InferenceResults = []mlTensors{{Output: outputs, StatusCode: http.StatusOK}}
	}
	writeJSON(w, http.StatusOK, out)
}
