package elasticsearch

// Error bodies for conditions a single test node cannot be driven into
// (rejections, breakers, blocks, security). Hand-written fakes, shaped
// like the engine's error documents.

import (
	"errors"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func fakeError(status int, body string) *Error {
	return newError("POST", "/x/_search", &response{Status: status, Header: map[string][]string{}, Body: []byte(body)})
}

func TestErrorCodeFakes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   rcp.Code
	}{
		{"rejected execution", 429, `{"error":{"type":"es_rejected_execution_exception","reason":"rejected execution of coordinating operation"},"status":429}`, rcp.CodeRateLimited},
		{"circuit breaker", 429, `{"error":{"type":"circuit_breaking_exception","reason":"[parent] Data too large","durability":"TRANSIENT"},"status":429}`, rcp.CodeRateLimited},
		{"nested rejection", 503, `{"error":{"type":"search_phase_execution_exception","root_cause":[{"type":"es_rejected_execution_exception"}]},"status":503}`, rcp.CodeRateLimited},
		{"flood stage block is not rate limiting", 429, `{"error":{"type":"cluster_block_exception","reason":"index [x] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block];"},"status":429}`, rcp.CodeBackendUnavailable},
		{"403 block is not auth", 403, `{"error":{"type":"cluster_block_exception","reason":"blocked by: [FORBIDDEN/8/index write (api)];"},"status":403}`, rcp.CodeBackendUnavailable},
		{"search timeout 429", 429, `{"error":{"type":"search_timeout_exception","reason":"Time exceeded"},"status":429}`, rcp.CodeTimeout},
		{"security 401", 401, `{"error":{"type":"security_exception","reason":"missing authentication credentials for REST request [/x/_search]"},"status":401}`, rcp.CodeUnauthorized},
		{"security 403", 403, `{"error":{"type":"security_exception","reason":"action [indices:data/read/search] is unauthorized for user [u]"},"status":403}`, rcp.CodeUnauthorized},
		{"licence 403", 403, `{"error":{"type":"security_exception","reason":"current license is non-compliant for [Reciprocal Rank Fusion (RRF)]"},"status":403}`, rcp.CodeOptionUnsupported},
		{"no shards", 503, `{"error":{"type":"no_shard_available_action_exception","reason":"No shard available"},"status":503}`, rcp.CodeBackendUnavailable},
		// A document refusal names the client's documents[i].meta only as a
		// bulk item (itemError knows i); at request level it is ours.
		{"request-level document refusal", 400, `{"error":{"type":"document_parsing_exception","reason":"failed to parse field [year]"},"status":400}`, rcp.CodeInternalError},
		{"conflict", 409, `{"error":{"type":"version_conflict_engine_exception","reason":"document already exists"},"status":409}`, rcp.CodeConflict},
		{"proxy html 502", 502, `<html>bad gateway</html>`, rcp.CodeBackendUnavailable},
		{"proxy 504", 504, ``, rcp.CodeTimeout},
		{"bare 429", 429, ``, rcp.CodeRateLimited},
		{"unknown 500", 500, `{"error":{"type":"null_pointer_exception"},"status":500}`, rcp.CodeInternalError},
		{"413", 413, ``, rcp.CodePayloadTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(fakeError(tc.status, tc.body)); got != tc.want {
				t.Errorf("got %v want %v", got, tc.want)
			}
		})
	}
}

// TestPartialFailureFakes: which engine answers the breaker must not
// count (adapters.PartialFailure): failed shards and a lost search
// context; a timed-out search and whole-request failures still count.
func TestPartialFailureFakes(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"failed shards", &errPartial{what: "1 of 3 shards failed"}, true},
		{"timed out", &errPartial{what: "timed_out"}, false},
		{"search context missing", fakeError(404, `{"error":{"type":"search_phase_execution_exception","root_cause":[{"type":"search_context_missing_exception"}]},"status":404}`), true},
		{"all shards failed 503", fakeError(503, `{"error":{"type":"search_phase_execution_exception","reason":"all shards failed"},"status":503}`), false},
		{"no shards", fakeError(503, `{"error":{"type":"no_shard_available_action_exception"},"status":503}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pf adapters.PartialFailure
			if got := errors.As(tc.err, &pf) && pf.PartialFailure(); got != tc.want {
				t.Errorf("partial = %v, want %v", got, tc.want)
			}
		})
	}
}
