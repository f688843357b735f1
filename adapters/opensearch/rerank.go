package opensearch

// Native rerank through ml-commons (engines.md §3.7): a model that scores
// (query, passage) pairs — a local TEXT_SIMILARITY cross-encoder, or a
// remote model whose connector calls a Cohere-style /v1/rerank service
// with the built-in connector.pre_process.cohere.rerank and
// connector.post_process.cohere.rerank functions — is called through
//
//	POST /_plugins/_ml/_predict/text_similarity/<id>
//	{"query_text": "...", "text_docs": ["...", ...]}
//
// The algorithm in the path matters: ml-commons parses a _predict body by
// the algorithm the path names, or else by the model's own one
// (RestMLPredictionAction). A remote model's own algorithm is REMOTE,
// whose input is {"parameters": {...}} and which skips query_text and
// text_docs; naming text_similarity makes the body a
// TextSimilarityInputDataSet, the input the Cohere pre-process function
// requires, and is the model's own algorithm for a local cross-encoder.
//
// The model answers one "similarity" tensor per passage, in passage
// order: a local model one inference result per passage, a remote one a
// single inference result with one output per passage. Both are read the
// way neural-search's rerank processor reads them: every output of every
// inference result, in order, data[0]. The recorded answers these shapes
// are tested against are in testdata/mlcommons, with their sources.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"sync/atomic"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Limits of the native reranker.
const (
	// DefaultRerankCandidates is rerank.maxCandidates when the
	// configuration leaves rerank_max_candidates out.
	DefaultRerankCandidates = 100
	// MaxRerankCandidates bounds rerank_max_candidates.
	MaxRerankCandidates = 1000
)

// modelID is what an ml-commons model id may look like: the engine's ids
// are 20-character URL-safe base64 strings; custom ids are allowed up to
// 128 characters of the same alphabet.
var modelID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

func (c *Config) validateRerank() error {
	if c.RerankModel == "" {
		if c.RerankMaxCandidates != 0 {
			return errors.New("opensearch: rerank_max_candidates needs rerank_model")
		}
		return nil
	}
	if !modelID.MatchString(c.RerankModel) {
		return fmt.Errorf("opensearch: rerank_model %q is not an ml-commons model id (letters, digits, '_' and '-')", c.RerankModel)
	}
	if c.RerankMaxCandidates < 0 || c.RerankMaxCandidates > MaxRerankCandidates {
		return fmt.Errorf("opensearch: rerank_max_candidates must be in [1, %d]", MaxRerankCandidates)
	}
	return nil
}

// newMLReranker is the configured ml-commons model, or nil when
// rerank_model is not set.
func newMLReranker(cfg *Config, cl *client) *mlReranker {
	if cfg.RerankModel == "" {
		return nil
	}
	n := cfg.RerankMaxCandidates
	if n == 0 {
		n = DefaultRerankCandidates
	}
	return &mlReranker{http: cl, model: cfg.RerankModel, max: n}
}

// mlReranker calls one ml-commons model's _predict API over the adapter's
// client (its authentication, TLS and SigV4 signing included).
type mlReranker struct {
	http  *client
	model string
	max   int
	// predicted: the start-up _predict call passed once; a re-probe only
	// reads the model document again (inference is not paid twice).
	predicted atomic.Bool
}

// via names the model for probe and usage.notes.
func (m *mlReranker) via() string { return "OpenSearch ml-commons model " + m.model }

// NativeRerank implements adapters.NativeReranker with the rerank_model's
// text_similarity _predict call: one score per passage, in passage order.
// Without rerank_model it is adapters.ErrNoNativeRerank (the probe then
// reports no native reranker, so the Engine does not call it).
func (a *adapter) NativeRerank(ctx context.Context, query string, passages []string) ([]float64, error) {
	if a.ml == nil {
		return nil, adapters.ErrNoNativeRerank
	}
	return a.ml.rerank(ctx, query, passages)
}

// probeReranker is Evidence.NativeReranker: nil without rerank_model,
// else the model's facts once its start-up check passed, or the reason it
// failed (never a probe error).
func (a *adapter) probeReranker(ctx context.Context) *capability.RerankerFacts {
	m := a.ml
	if m == nil {
		return nil
	}
	f := &capability.RerankerFacts{Method: "cross-encoder", Via: m.via()}
	proof, err := m.check(ctx)
	if err != nil {
		f.Failed = err.Error()
		a.log.Debug("rerank model start-up check failed", "model", m.model, "err", err) // probe explains it (Failed)
		return f
	}
	f.Models, f.MaxCandidates, f.Proof = []string{m.model}, m.max, proof
	return f
}

var _ adapters.NativeReranker = (*adapter)(nil)

// predictRequest is the body of a text-similarity _predict call.
type predictRequest struct {
	QueryText string   `json:"query_text"`
	TextDocs  []string `json:"text_docs"`
}

// predictResponse is the part of a _predict answer the reranker reads.
type predictResponse struct {
	InferenceResults []struct {
		Output []struct {
			Name string     `json:"name"`
			Data []*float64 `json:"data"`
		} `json:"output"`
	} `json:"inference_results"`
}

// modelInfo is the part of GET /_plugins/_ml/models/<id> the check reports.
type modelInfo struct {
	Name       string `json:"name"`
	Algorithm  string `json:"algorithm"`
	ModelState string `json:"model_state"`
}

// predictPath is the text-similarity _predict route for the model.
func (m *mlReranker) predictPath() string {
	return "/_plugins/_ml/_predict/text_similarity/" + url.PathEscape(m.model)
}

// predictBody is the exact _predict body for query and passages.
func predictBody(query string, passages []string) ([]byte, error) {
	return json.Marshal(predictRequest{QueryText: query, TextDocs: passages})
}

// rerank scores passages with the model: scores[i] belongs to
// passages[i]. More than rerank_max_candidates passages is -32602 on
// "passages".
func (m *mlReranker) rerank(ctx context.Context, query string, passages []string) ([]float64, error) {
	if len(passages) == 0 {
		return []float64{}, nil
	}
	if len(passages) > m.max {
		return nil, rcp.InvalidParams("passages", "%d passages exceed the rerank model's limit of %d", len(passages), m.max)
	}
	body, err := predictBody(query, passages)
	if err != nil {
		return nil, rcp.NewError(rcp.CodeInternalError, "rerank request could not be built")
	}
	res, err := m.http.do(ctx, http.MethodPost, m.predictPath(), body, false)
	if err != nil {
		return nil, m.callError(ctx, err)
	}
	return m.decode(res.Body, len(passages))
}

// decode reads one finite score per passage out of a _predict answer.
func (m *mlReranker) decode(raw []byte, n int) ([]float64, error) {
	var r predictResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, m.badResponse("not a JSON object with inference_results")
	}
	scores := make([]float64, 0, n)
	for _, ir := range r.InferenceResults {
		for _, o := range ir.Output {
			if len(o.Data) == 0 || o.Data[0] == nil {
				return nil, m.badResponse("an output without data")
			}
			s := *o.Data[0]
			if math.IsNaN(s) || math.IsInf(s, 0) {
				return nil, m.badResponse("a score that is not a finite number")
			}
			scores = append(scores, s)
		}
	}
	if len(scores) != n {
		return nil, m.badResponse(fmt.Sprintf("%d scores for %d passages", len(scores), n))
	}
	return scores, nil
}

func (m *mlReranker) badResponse(why string) *rcp.Error {
	return rcp.NewError(rcp.CodeInternalError, "rerank model %s answered an invalid _predict response: %s", m.model, why)
}

// callError maps a failed model call to a precise RCP error. The engine's
// reason is not echoed: a remote connector's error may repeat the
// passages or the upstream's answer. Only the error type and status are.
//
//   - 404 (model deleted, or never registered) → -32010, not retryable:
//     the model the capability was advertised from is gone.
//   - 429 and rejected executions → -32011, retryable.
//   - 5xx → -32010, retryable (a remote connector's upstream failing
//     surfaces here too).
//   - any other 4xx (model undeployed, connector refused) → -32010, not
//     retryable.
//   - no response: the request's deadline → -32014, cancellation →
//     -32006, a refused or reset connection → -32010; an answer that
//     cannot be read → -32603.
func (m *mlReranker) callError(ctx context.Context, err error) *rcp.Error {
	var oe *Error
	if !errors.As(err, &oe) {
		switch {
		case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
			return rcp.NewError(rcp.CodeCancelled, "rerank cancelled")
		case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
			return rcp.Retryable(rcp.CodeTimeout, 0, "rerank model %s: deadline exceeded", m.model)
		}
		switch classifyTransport(err) {
		case rcp.CodeTimeout:
			return rcp.Retryable(rcp.CodeTimeout, 0, "rerank model %s: deadline exceeded", m.model)
		case rcp.CodeBackendUnavailable:
			return rcp.Retryable(rcp.CodeBackendUnavailable, 0, "rerank model %s: engine unreachable", m.model)
		}
		return rcp.NewError(rcp.CodeInternalError, "rerank model %s: the engine's answer could not be read", m.model)
	}
	kind := fmt.Sprintf("HTTP %d", oe.Status)
	if oe.Cause != nil && oe.Cause.Type != "" {
		kind += " " + oe.Cause.Type
	}
	switch {
	case oe.Status == http.StatusNotFound:
		return rcp.NewError(rcp.CodeBackendUnavailable, "rerank model %s is not on the engine (%s): deleted or never registered", m.model, kind)
	case classifyError(oe) == rcp.CodeRateLimited || oe.Status == http.StatusTooManyRequests:
		return rcp.Retryable(rcp.CodeRateLimited, oe.RetryAfterMs(), "rerank model %s: engine rate limited (%s)", m.model, kind)
	case oe.Status >= 500:
		return rcp.Retryable(rcp.CodeBackendUnavailable, oe.RetryAfterMs(), "rerank model %s failed on the engine (%s)", m.model, kind)
	}
	return rcp.NewError(rcp.CodeBackendUnavailable, "rerank model %s refused the call (%s): not deployed, or its connector failed", m.model, kind)
}

// check is the model's start-up check: the model must exist and be
// a TEXT_SIMILARITY or REMOTE model (GET /_plugins/_ml/models/<id>
// answers MLModel.toXContent, whose "algorithm" is the model's function
// name); a local one must be deployed, since ml-commons auto-deploys
// only remote models on their first _predict. Then one _predict call
// with two passages, one a copy of the query, must score the copy above
// the unrelated passage (the sidecar reranker's start-up check,
// reranker.Client.Check, made of the engine's model).
func (m *mlReranker) check(ctx context.Context) (string, error) {
	var info modelInfo
	if err := m.http.getJSON(ctx, "/_plugins/_ml/models/"+url.PathEscape(m.model), &info); err != nil {
		var oe *Error
		if errors.As(err, &oe) && oe.Status == http.StatusBadRequest && oe.Cause == nil {
			return "", fmt.Errorf("rerank model %s: the engine has no ml-commons plugin (HTTP 400 on its model API)", m.model)
		}
		return "", fmt.Errorf("rerank model %s: %w", m.model, m.callError(ctx, err))
	}
	switch info.Algorithm {
	case "TEXT_SIMILARITY":
		if info.ModelState != "DEPLOYED" && info.ModelState != "PARTIALLY_DEPLOYED" {
			return "", fmt.Errorf("rerank model %s: a local text-similarity model in state %q; deploy it first (POST /_plugins/_ml/models/%s/_deploy)", m.model, info.ModelState, m.model)
		}
	case "REMOTE":
	default:
		return "", fmt.Errorf("rerank model %s: algorithm %q is not a reranker; want TEXT_SIMILARITY (a local cross-encoder) or REMOTE (a rerank connector)", m.model, info.Algorithm)
	}
	if !m.predicted.Load() {
		q := "what does a reranker check at start-up"
		scores, err := m.rerank(ctx, q, []string{"Bananas are rich in potassium.", q})
		if err != nil {
			return "", fmt.Errorf("rerank model %s: start-up _predict: %w", m.model, err)
		}
		if !(scores[1] > scores[0]) {
			return "", fmt.Errorf("rerank model %s: start-up check: the passage equal to the query scored %g, below an unrelated one (%g)", m.model, scores[1], scores[0])
		}
		m.predicted.Store(true)
	}
	return fmt.Sprintf("start-up check passed (ml-commons model %s %q, algorithm %s, state %s, scored a copy of the query above an unrelated passage through text_similarity _predict)",
		m.model, info.Name, info.Algorithm, info.ModelState), nil
}
