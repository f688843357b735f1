// Package reranker is a client for HTTP cross-encoder reranking services.
// It speaks the two request shapes in common use:
//
//   - APICohere, the widely copied POST <base>/v1/rerank with
//     {"model","query","documents","top_n"} answered by
//     {"results":[{"index","relevance_score"}]} — Cohere, Jina, vLLM,
//     Infinity and others;
//   - APITEI, Text Embeddings Inference's POST <base>/rerank with
//     {"query","texts","raw_scores"} answered by [{"index","score"}].
//
// Every call is bounded: a per-call timeout, a bounded number of retries
// with the module's backoff (retry) on 429, 5xx and connection
// errors, a cap on the passages per call and on the response size. The
// API key is sent as a bearer token and never appears in an error.
package reranker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/internal/fetch"
	"github.com/rcp-sidecar/rcp-sidecar/internal/h1"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retry"
)

// API selects the request and response shape of the service.
type API string

// Supported API shapes.
const (
	APICohere API = "cohere" // POST /v1/rerank, results[].relevance_score
	APITEI    API = "tei"    // POST /rerank, [].score
)

// Defaults applied by New to zero options.
const (
	DefaultMaxCandidates = 100
	DefaultTimeout       = 10 * time.Second
	DefaultRetries       = 2
	// MaxResponseBytes bounds one response body.
	MaxResponseBytes = 8 << 20
)

// Options configure a Client.
type Options struct {
	// BaseURL is the service root (http or https, no credentials);
	// requests go to BaseURL + "/v1/rerank" (APICohere) or "/rerank"
	// (APITEI). A BaseURL already ending in /v1 is accepted for APICohere.
	BaseURL string
	// API is the request shape (default APICohere).
	API API
	// Model is sent as "model" (APICohere) and reported in rerank.models.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// MaxCandidates caps the passages of one call (default 100).
	MaxCandidates int
	// Timeout bounds one Rerank call, retries included (default 10s).
	Timeout time.Duration
	// Retries bounds the retries of one call (default 2; negative: none).
	Retries int
	// HTTPClient overrides the default client.
	HTTPClient *http.Client
	// BackoffBase and BackoffMax shape the backoff (defaults 100ms, 2s).
	BackoffBase, BackoffMax time.Duration
}

// Client reranks passages against a query with one remote model. It is
// safe for concurrent use.
type Client struct {
	opts     Options
	endpoint string
	client   *http.Client
}

// New validates o and applies defaults. It does no I/O; Check proves the
// service works.
func New(o Options) (*Client, error) {
	if o.API == "" {
		o.API = APICohere
	}
	if o.API != APICohere && o.API != APITEI {
		return nil, fmt.Errorf("reranker: api must be %q or %q, got %q", APICohere, APITEI, o.API)
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("reranker: url must be an absolute http(s) URL")
	}
	if u.User != nil {
		return nil, errors.New("reranker: url must not carry credentials; use api_key")
	}
	if o.Model == "" {
		return nil, errors.New("reranker: model is required")
	}
	if o.MaxCandidates <= 0 {
		o.MaxCandidates = DefaultMaxCandidates
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	switch {
	case o.Retries < 0:
		o.Retries = 0
	case o.Retries == 0:
		o.Retries = DefaultRetries
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = 100 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 2 * time.Second
	}
	c := &Client{opts: o, client: o.HTTPClient}
	if c.client == nil {
		// Each call is made on the caller's goroutine (internal/h1).
		c.client = &http.Client{Transport: h1.New(&http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 16,
			MaxConnsPerHost: 64, // dials bounded too: a server that stops accepting costs no goroutine per call
			IdleConnTimeout: 90 * time.Second, ResponseHeaderTimeout: o.Timeout,
			TLSHandshakeTimeout: 10 * time.Second})}
	}
	c.client = fetch.Rule{}.Client(c.client) // redirects re-checked (internal/fetch)
	base := strings.TrimRight(o.BaseURL, "/")
	if o.API == APITEI {
		c.endpoint = base + "/rerank"
	} else {
		c.endpoint = strings.TrimSuffix(base, "/v1") + "/v1/rerank"
	}
	return c, nil
}

// Method is the rerank method the client implements (§6 rerank.methods).
func (c *Client) Method() string { return "cross-encoder" }

// Models lists the one model the client calls.
func (c *Client) Models() []string { return []string{c.opts.Model} }

// MaxCandidates is the most passages one call accepts.
func (c *Client) MaxCandidates() int { return c.opts.MaxCandidates }

// Check proves the service reranks: two passages, one of which repeats
// the query, must come back with one finite score each and the repeated
// passage ranked first. It returns a sentence saying what it proved.
func (c *Client) Check(ctx context.Context) (string, error) {
	q := "what does a reranker check at start-up"
	scores, err := c.Rerank(ctx, q, []string{"Bananas are rich in potassium.", q})
	if err != nil {
		return "", err
	}
	if !(scores[1] > scores[0]) {
		return "", fmt.Errorf("reranker start-up check: the passage equal to the query scored %g, below an unrelated one (%g)", scores[1], scores[0])
	}
	return fmt.Sprintf("start-up check passed (%s API at %s scored a copy of the query above an unrelated passage)", c.opts.API, redactURL(c.endpoint)), nil
}

type cohereRequest struct {
	Model     string   `json:"model"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	TopN      int      `json:"top_n"`
}

type cohereResponse struct {
	Results []struct {
		Index          *int     `json:"index"`
		RelevanceScore *float64 `json:"relevance_score"`
	} `json:"results"`
}

type teiRequest struct {
	Query     string   `json:"query"`
	Texts     []string `json:"texts"`
	RawScores bool     `json:"raw_scores"`
}

type teiResult struct {
	Index *int     `json:"index"`
	Score *float64 `json:"score"`
}

// Rerank scores every passage against query; scores[i] belongs to
// passages[i]. More than MaxCandidates passages is an error (-32602 on
// "passages"): callers trim their funnel first.
func (c *Client) Rerank(ctx context.Context, query string, passages []string) ([]float64, error) {
	if len(passages) == 0 {
		return []float64{}, nil
	}
	if len(passages) > c.opts.MaxCandidates {
		return nil, rcp.InvalidParams("passages", "%d passages exceed the reranker's limit of %d", len(passages), c.opts.MaxCandidates)
	}
	body, err := c.body(query, passages)
	if err != nil {
		return nil, rcp.AsError(err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var scores []float64
	var last *rcp.Error
	p := retry.Policy{
		MaxAttempts: c.opts.Retries + 1, Base: c.opts.BackoffBase, Max: c.opts.BackoffMax,
		Retryable: func(error) bool { return last.AdvisesRetry() },
		Hint:      func(error) time.Duration { return last.RetryAfter() },
	}
	rerr := retry.Do(ctx, p, func(ctx context.Context, _ int) error {
		scores, last = c.attempt(ctx, body, len(passages))
		if last == nil {
			return nil
		}
		return last
	})
	if rerr == nil {
		return scores, nil
	}
	if cerr := ctx.Err(); cerr != nil && last != nil && last.Code != rcp.CodeInternalError {
		return nil, transportError(cerr)
	}
	return nil, last
}

func (c *Client) body(query string, passages []string) ([]byte, error) {
	if c.opts.API == APITEI {
		return json.Marshal(teiRequest{Query: query, Texts: passages, RawScores: false})
	}
	return json.Marshal(cohereRequest{Model: c.opts.Model, Query: query, Documents: passages, TopN: len(passages)})
}

// attempt is one HTTP round trip, its answer validated.
func (c *Client) attempt(ctx context.Context, body []byte, n int) ([]float64, *rcp.Error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, rcp.NewError(rcp.CodeInternalError, "reranker request could not be built")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, transportError(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, transportError(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, statusError(resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if len(raw) > MaxResponseBytes {
		return nil, rcp.NewError(rcp.CodeInternalError, "reranker response exceeds %d bytes", MaxResponseBytes)
	}
	return c.decode(raw, n)
}

// decode reads either shape into scores by index: every index in [0,n)
// exactly once, every score finite.
func (c *Client) decode(raw []byte, n int) ([]float64, *rcp.Error) {
	type pair struct {
		i *int
		s *float64
	}
	var pairs []pair
	if c.opts.API == APITEI {
		var rs []teiResult
		if err := json.Unmarshal(raw, &rs); err != nil {
			return nil, badResponse("not a JSON array of {index, score}")
		}
		for _, r := range rs {
			pairs = append(pairs, pair{r.Index, r.Score})
		}
	} else {
		var r cohereResponse
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, badResponse("not a JSON object with results[{index, relevance_score}]")
		}
		for _, x := range r.Results {
			pairs = append(pairs, pair{x.Index, x.RelevanceScore})
		}
	}
	if len(pairs) != n {
		return nil, badResponse(fmt.Sprintf("%d results for %d passages", len(pairs), n))
	}
	scores := make([]float64, n)
	seen := make([]bool, n)
	for _, p := range pairs {
		switch {
		case p.i == nil || p.s == nil:
			return nil, badResponse("a result without index or score")
		case *p.i < 0 || *p.i >= n || seen[*p.i]:
			return nil, badResponse(fmt.Sprintf("index %d out of range or repeated", *p.i))
		case math.IsNaN(*p.s) || math.IsInf(*p.s, 0):
			return nil, badResponse("a score that is not a finite number")
		}
		seen[*p.i] = true
		scores[*p.i] = *p.s
	}
	return scores, nil
}

func badResponse(why string) *rcp.Error {
	return rcp.NewError(rcp.CodeInternalError, "reranker answered an invalid response: %s", why)
}

// transportError maps a round-trip failure: deadline → -32014,
// cancellation → -32006, anything else (refused, reset) → -32010.
func transportError(err error) *rcp.Error {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return rcp.NewError(rcp.CodeCancelled, "rerank cancelled")
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return rcp.Retryable(rcp.CodeTimeout, 0, "reranker deadline exceeded")
	}
	return rcp.Retryable(rcp.CodeBackendUnavailable, 0, "reranker unreachable")
}

// statusError maps an upstream status: 429 → -32011 and 5xx → -32010
// (both retryable, with the Retry-After hint), anything else → -32603. The
// body is not echoed: it may repeat the API key or the passages.
func statusError(status int, retryAfter string) *rcp.Error {
	var ms int64
	if s, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && s > 0 {
		ms = int64(min(s, 60)) * 1000
	}
	switch {
	case status == http.StatusTooManyRequests:
		return rcp.Retryable(rcp.CodeRateLimited, ms, "reranker rate limited (HTTP 429)")
	case status >= 500:
		return rcp.Retryable(rcp.CodeBackendUnavailable, ms, "reranker unavailable (HTTP %d)", status)
	}
	return rcp.NewError(rcp.CodeInternalError, "reranker refused the request (HTTP %d)", status)
}

// redactURL drops query and fragment (which may carry tokens).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<url>"
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}
