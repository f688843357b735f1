package elasticsearch

// The engine's own reranker (engines.md §2.9): an inference endpoint of
// task_type rerank, probed with GET /_inference/rerank/_all and the
// licence, served to the rerank method through POST
// /_inference/rerank/<id> and to retrieve's rerank stage as a
// text_similarity_reranker retriever around the stage's search.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// rerankVersion is the first version whose text_similarity_reranker
// retriever the adapter plans: the first minor after 8.15.1, which fixed
// a missing endpoint passing silently on an empty result (engines.md
// §2.9).
var rerankVersion = [2]int{8, 16}

// rerankLicences are the licence types that allow both the inference API
// and the text_similarity_reranker retriever (engines.md §2.9: both are
// ENTERPRISE features; a trial allows every feature).
var rerankLicences = []string{"enterprise", "trial"}

// rerankProbe is what the probe learned about the engine's reranker.
type rerankProbe struct {
	// id is the inference endpoint used; "" when none is usable.
	id string
	// facts are the evidence (Failed set when id is "").
	facts *capability.RerankerFacts
}

// inferenceEndpoint is one entry of GET /_inference/<task_type>/_all.
type inferenceEndpoint struct {
	ID              string `json:"inference_id"`
	TaskType        string `json:"task_type"`
	Service         string `json:"service"`
	ServiceSettings struct {
		ModelID string `json:"model_id"`
	} `json:"service_settings"`
}

// probeReranker lists the rerank inference endpoints, picks the
// configured one (or the only one) and checks the licence. Every failure
// is a reason in RerankerFacts.Failed, never a probe error.
func (a *adapter) probeReranker(ctx context.Context, licence string) *rerankProbe {
	via := "Elasticsearch inference API"
	failed := func(format string, args ...any) *rerankProbe {
		return &rerankProbe{facts: &capability.RerankerFacts{Method: "cross-encoder", Via: via, Failed: fmt.Sprintf(format, args...)}}
	}
	var inf struct {
		Endpoints []inferenceEndpoint `json:"endpoints"`
	}
	if _, err := a.getJSON(ctx, "/_inference/rerank/_all", &inf); err != nil {
		return failed("the engine has no inference API (GET /_inference/rerank/_all: %s)", statusText(err))
	}
	ep, why := pickEndpoint(inf.Endpoints, a.cfg.RerankInferenceID)
	if ep == nil {
		return failed("%s", why)
	}
	via = "Elasticsearch inference endpoint " + ep.ID
	if !slices.Contains(rerankLicences, licence) {
		return failed("inference endpoint %s found, but the licence is %q: the inference API and text_similarity_reranker need an enterprise or trial licence", ep.ID, licence)
	}
	if err := a.checkReranker(ctx, ep.ID); err != nil {
		return failed("inference endpoint %s failed the start-up check: %s", ep.ID, err)
	}
	maxC := a.cfg.RerankMaxCandidates
	if maxC <= 0 {
		maxC = DefaultRerankMaxCandidates
	}
	proof := fmt.Sprintf("inference endpoint %s (task_type rerank, service %s", ep.ID, ep.Service)
	if ep.ServiceSettings.ModelID != "" {
		proof += ", model " + ep.ServiceSettings.ModelID
	}
	proof += fmt.Sprintf("), licence %s; start-up check passed (a copy of the query scored above an unrelated passage)", licence)
	return &rerankProbe{id: ep.ID, facts: &capability.RerankerFacts{Method: "cross-encoder", Models: []string{ep.ID}, MaxCandidates: maxC, Proof: proof, Via: via}}
}

// checkQuery is the start-up check's query; the check passes when a copy
// of it scores above an unrelated passage (as the sidecar reranker's).
const checkQuery = "what does a reranker check at start-up"

// checkReranker calls the endpoint once per adapter and endpoint (a
// re-probe does not pay for inference again): a copy of the query must
// score above an unrelated passage. The reason it failed is returned
// without the engine's text.
func (a *adapter) checkReranker(ctx context.Context, id string) error {
	if _, ok := a.rerankChecked.Load(id); ok {
		return nil
	}
	scores, err := a.rerankWith(ctx, id, checkQuery, []string{"Bananas are rich in potassium.", checkQuery})
	switch {
	case err != nil:
		return fmt.Errorf("POST /_inference/rerank/%s: %s", id, statusText(err))
	case !(scores[1] > scores[0]):
		return fmt.Errorf("the passage equal to the query scored %g, below an unrelated one (%g)", scores[1], scores[0])
	}
	a.rerankChecked.Store(id, true)
	return nil
}

// pickEndpoint chooses the endpoint named by want, or the only rerank
// endpoint when want is empty; nil and the reason otherwise.
func pickEndpoint(eps []inferenceEndpoint, want string) (*inferenceEndpoint, string) {
	var ids []string
	var found []*inferenceEndpoint
	for i := range eps {
		if eps[i].TaskType == "rerank" && eps[i].ID != "" {
			found = append(found, &eps[i])
			ids = append(ids, eps[i].ID)
		}
	}
	slices.Sort(ids)
	switch {
	case want != "":
		for _, ep := range found {
			if ep.ID == want {
				return ep, ""
			}
		}
		return nil, fmt.Sprintf("rerank_inference_id %q is not an inference endpoint of task_type rerank (found: %s)", want, strings.Join(ids, ", "))
	case len(found) == 0:
		return nil, "the engine has no inference endpoint of task_type rerank"
	case len(found) > 1:
		return nil, fmt.Sprintf("%d inference endpoints of task_type rerank (%s): choose one with rerank_inference_id", len(found), strings.Join(ids, ", "))
	}
	return found[0], ""
}

// statusText describes a failed probe call without the engine's text.
func statusText(err error) string {
	var e *Error
	var re *rcp.Error
	var rd *errRankedDocs
	switch {
	case errors.As(err, &rd):
		return rd.what
	case errors.As(err, &re):
		return re.Message
	case errors.As(err, &e):
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return "not reachable"
}

// applyReranker records the reranker in the evidence; the rerank stage
// also needs a content field to score and a version whose retriever the
// adapter plans.
func applyReranker(f *facts, st *probeState) {
	rp := f.rerank
	if rp == nil {
		return
	}
	st.ev.NativeReranker = rp.facts
	if rp.id == "" {
		return
	}
	switch {
	case st.content == "":
		st.ev.Notes = append(st.ev.Notes, "rerank inside the search needs a content field; retrieve reranks through the rerank inference API instead")
	case !atLeast(f.version, rerankVersion):
		st.ev.Notes = append(st.ev.Notes, fmt.Sprintf("text_similarity_reranker is planned from %d.%d; retrieve reranks through the rerank inference API instead", rerankVersion[0], rerankVersion[1]))
	default:
		st.rerankID = rp.id
		st.ev.NativeRerankStage = true
	}
}

// errRerankLost: the last probe found no usable reranker although the
// capabilities, fixed at start-up, advertise it.
func errRerankLost() error {
	return rcp.Retryable(rcp.CodeBackendUnavailable, 0, "the engine's reranker is not available (no usable rerank endpoint at the last probe)")
}

// rerankRequest is the body of POST /_inference/rerank/<id>.
type rerankRequest struct {
	Query string   `json:"query"`
	Input []string `json:"input"`
}

// rankedDocs is the body of a rerank inference response.
type rankedDocs struct {
	Rerank []struct {
		Index *int     `json:"index"`
		Score *float64 `json:"relevance_score"`
	} `json:"rerank"`
}

// errRankedDocs is a rerank response that does not score every passage
// exactly once.
type errRankedDocs struct{ what string }

func (e *errRankedDocs) Error() string { return "elasticsearch: rerank response: " + e.what }

// NativeRerank implements adapters.NativeReranker with the probed
// inference endpoint: one score per passage, in passage order.
func (a *adapter) NativeRerank(ctx context.Context, query string, passages []string) ([]float64, error) {
	f := a.facts.Load()
	if f == nil || f.rerank == nil || f.rerank.id == "" {
		// A later probe no longer finds it: the capabilities stay (§13.2).
		return nil, errRerankLost()
	}
	return a.rerankWith(ctx, f.rerank.id, query, passages)
}

// rerankWith scores passages with endpoint id.
func (a *adapter) rerankWith(ctx context.Context, id, query string, passages []string) ([]float64, error) {
	body, err := json.Marshal(rerankRequest{Query: query, Input: passages})
	if err != nil {
		return nil, fmt.Errorf("elasticsearch: encode rerank: %w", err)
	}
	res, err := a.do(ctx, http.MethodPost, "/_inference/rerank/"+url.PathEscape(id), body, false)
	if err != nil {
		return nil, rerankError(err)
	}
	return decodeRanked(res.Body, len(passages))
}

// decodeRanked maps a rerank response to passage order; every passage
// must be scored exactly once.
func decodeRanked(body []byte, n int) ([]float64, error) {
	var rd rankedDocs
	if err := json.Unmarshal(body, &rd); err != nil {
		return nil, &errRankedDocs{"not a rerank result"}
	}
	if len(rd.Rerank) != n {
		return nil, &errRankedDocs{fmt.Sprintf("%d scores for %d passages", len(rd.Rerank), n)}
	}
	scores := make([]float64, n)
	seen := make([]bool, n)
	for _, d := range rd.Rerank {
		if d.Index == nil || d.Score == nil || *d.Index < 0 || *d.Index >= n || seen[*d.Index] {
			return nil, &errRankedDocs{"an entry without a valid, unique index and a score"}
		}
		seen[*d.Index] = true
		scores[*d.Index] = *d.Score
	}
	return scores, nil
}

// rerankError gives a licence refusal its option (-32005 with
// data.option "rerank"); everything else is classified by ErrorCode.
func rerankError(err error) error {
	var e *Error
	if errors.As(err, &e) && licenceRefused(e) {
		return rcp.OptionUnsupported("rerank", "the engine's licence does not allow its reranker").WithCause(err)
	}
	return err
}

// licenceRefused: the engine refused a licensed feature (engines.md §2.9).
func licenceRefused(e *Error) bool {
	return e.Cause != nil && slices.Contains(e.Cause.Types(), "security_exception") && strings.Contains(e.Cause.Reason, "license")
}

// endpointGone: an inference endpoint the probe found no longer exists.
func endpointGone(e *Error) bool {
	return e.Cause != nil && slices.Contains(e.Cause.Types(), "resource_not_found_exception") &&
		strings.Contains(strings.ToLower(e.Cause.Reason), "inference endpoint")
}

// rerankRetriever wraps the stage's search in a text_similarity_reranker
// retriever: the first-stage query, kNN or retriever becomes its inner
// retriever, its window is the funnel's topN and at most that many hits
// come back (the retriever returns no more than its window).
func rerankRetriever(st *probeState, s *dsl.Search, req *adapters.SearchRequest) error {
	rr := req.Rerank
	switch {
	case st.rerankID == "":
		return errRerankLost()
	case rr.WindowSize < 1 || rr.WindowSize > maxWindow:
		return fmt.Errorf("elasticsearch: rerank window %d out of range", rr.WindowSize)
	case req.Recency != nil || req.Unit == "document" || req.From > 0 || req.After != nil || req.MinScore != nil || req.MMRLambda != nil:
		return errors.New("elasticsearch: native rerank cannot be combined with recency, collapse, paging, min_score or native MMR")
	}
	var inner dsl.Retriever
	switch {
	case s.Retriever != nil:
		inner, s.Retriever = s.Retriever, nil
	case s.Knn != nil:
		inner, s.Knn = (*dsl.KnnRetriever)(s.Knn), nil
	default:
		inner, s.Query = &dsl.Standard{Query: s.Query}, nil
	}
	s.MinScore = nil
	size := min(*s.Size, rr.WindowSize)
	s.Size = &size
	s.Retriever = &dsl.TextSimilarityReranker{Retriever: inner, Field: st.content, InferenceID: st.rerankID,
		InferenceText: rr.Text, RankWindowSize: rr.WindowSize}
	return nil
}

// reranksInEngine reads the endpoint back from a plan that reranks in
// the engine ("" when it does not).
func reranksInEngine(p *adapters.Plan) string {
	raw, ok := dsl.Lookup(p.Body, "retriever", "text_similarity_reranker", "inference_id")
	if !ok {
		return ""
	}
	var id string
	if json.Unmarshal(raw, &id) != nil {
		return ""
	}
	return id
}

var _ adapters.NativeReranker = (*adapter)(nil)
