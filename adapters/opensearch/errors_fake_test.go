package opensearch

// Tests in this file run against fakeOpenSearch, an httptest server that
// replays recorded (testdata/errors, captured from a live 3.5.0 node) or
// hand-written error responses. They test decoding and classification
// only; behaviour is tested against the live engine in opensearch_test.go.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// fakeReply is one canned response.
type fakeReply struct {
	status int
	body   string
	header map[string]string
}

// fakeOpenSearch answers every request with reply and counts requests.
func fakeOpenSearch(t *testing.T, reply fakeReply) *adapter {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range reply.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.status)
		_, _ = w.Write([]byte(reply.body))
	}))
	t.Cleanup(srv.Close)
	cfg := testConfig()
	cfg.URLs, cfg.Writable = []string{srv.URL}, true
	a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ad := a.(*adapter)
	ad.setSchema(recordedSchema(t, nil))
	return ad
}

// recordedReply loads testdata/errors/<name>.json ({status, body}).
func recordedReply(t *testing.T, name string) fakeReply {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "errors", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Status int             `json:"status"`
		Body   json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return fakeReply{status: r.Status, body: string(r.Body)}
}

func searchOnce(t *testing.T, a *adapter) (*adapters.Candidates, error) {
	t.Helper()
	p, err := a.Plan(&adapters.SearchRequest{Stage: adapters.StageDense, Vector: vec8, K: 3, CandidateK: 3})
	if err != nil {
		t.Fatal(err)
	}
	return a.Search(context.Background(), p)
}

func TestErrorClassificationFake(t *testing.T) {
	partial := `{"timed_out":false,"_shards":{"total":2,"successful":1,"failed":1,"failures":[{"shard":0,"index":"i","reason":{"type":"circuit_breaking_exception","reason":"[parent] Data too large","durability":"TRANSIENT"}}]},"hits":{"hits":[]}}`
	tests := []struct {
		name      string
		reply     fakeReply
		code      rcp.Code
		retryMs   int64
		recording string
	}{
		{name: "index_not_found", recording: "index_not_found", code: rcp.CodeBackendUnavailable},
		// A body the engine cannot parse, a query vector of the wrong size, a k
		// past the plugin's bound and a missing cluster setting are refusals
		// of what the sidecar built: -32603, never -32602 on the client.
		{name: "parsing_exception", recording: "parsing_exception", code: rcp.CodeInternalError},
		{name: "date parse in shard failure", recording: "date_parse", code: rcp.CodeInvalidParams},
		{name: "knn k too large", recording: "knn_k_too_large", code: rcp.CodeInternalError},
		{name: "knn dimension", recording: "knn_dims", code: rcp.CodeInternalError},
		{name: "json parse", recording: "json_parse", code: rcp.CodeInternalError},
		{name: "mmr factories disabled", recording: "mmr_disabled", code: rcp.CodeInternalError},
		{name: "circuit breaker", reply: fakeReply{429, `{"error":{"type":"circuit_breaking_exception","reason":"[parent] Data too large","durability":"TRANSIENT"},"status":429}`, nil},
			code: rcp.CodeRateLimited, retryMs: 1000},
		{name: "rejected execution with Retry-After", reply: fakeReply{429, `{"error":{"root_cause":[{"type":"rejected_execution_exception","reason":"rejected execution of coordinating operation"}],"type":"rejected_execution_exception","reason":"rejected"},"status":429}`, map[string]string{"Retry-After": "7"}},
			code: rcp.CodeRateLimited, retryMs: 7000},
		{name: "flood stage block is not rate limiting", reply: fakeReply{429, `{"error":{"type":"cluster_block_exception","reason":"index [i] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block];"},"status":429}`, nil},
			code: rcp.CodeBackendUnavailable},
		{name: "403 cluster block is not auth", reply: fakeReply{403, `{"error":{"type":"cluster_block_exception","reason":"blocked by: [FORBIDDEN/8/index write (api)];"},"status":403}`, nil},
			code: rcp.CodeBackendUnavailable},
		{name: "security 403", reply: fakeReply{403, `{"error":{"type":"security_exception","reason":"no permissions for [indices:data/read/search]"},"status":403}`, nil},
			code: rcp.CodeUnauthorized},
		{name: "plain-text 401", reply: fakeReply{401, `Unauthorized`, nil}, code: rcp.CodeUnauthorized},
		{name: "search timeout", reply: fakeReply{504, `{"error":{"type":"search_timeout_exception","reason":"Time exceeded"},"status":504}`, nil},
			code: rcp.CodeTimeout},
		{name: "timed_out in a 200", reply: fakeReply{200, `{"timed_out":true,"_shards":{"total":1,"successful":1,"failed":0},"hits":{"hits":[]}}`, nil},
			code: rcp.CodeTimeout},
		{name: "partial shard failure", reply: fakeReply{200, partial, nil}, code: rcp.CodeRateLimited, retryMs: 1000},
		{name: "proxy 502 without body", reply: fakeReply{502, ``, nil}, code: rcp.CodeBackendUnavailable},
		{name: "unknown 500", reply: fakeReply{500, `{"error":{"type":"null_pointer_exception","reason":"x"},"status":500}`, nil},
			code: rcp.CodeInternalError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reply := tc.reply
			if tc.recording != "" {
				reply = recordedReply(t, tc.recording)
			}
			a := fakeOpenSearch(t, reply)
			_, err := searchOnce(t, a)
			if err == nil {
				t.Fatal("no error")
			}
			if got := a.ErrorCode(err); got != tc.code {
				t.Errorf("ErrorCode = %v, want %v (err %v)", got, tc.code, err)
			}
			var ra adapters.RetryAfterer
			got := int64(0)
			if errors.As(err, &ra) {
				got = ra.RetryAfterMs()
			}
			if got != tc.retryMs {
				t.Errorf("RetryAfterMs = %d, want %d", got, tc.retryMs)
			}
		})
	}
}

func TestTransportErrors(t *testing.T) {
	cfg := testConfig()
	cfg.URLs = []string{"http://127.0.0.1:1"}
	a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.Probe(context.Background())
	if got := a.ErrorCode(err); got != rcp.CodeBackendUnavailable {
		t.Errorf("connection refused: ErrorCode = %v (err %v)", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = a.Probe(ctx)
	if got := a.ErrorCode(err); got != rcp.CodeCancelled {
		t.Errorf("cancelled: ErrorCode = %v (err %v)", got, err)
	}
	for _, e := range []error{nil, errors.New("x"), &rcp.Error{}, context.DeadlineExceeded} {
		if c := a.ErrorCode(e); !c.Valid() {
			t.Errorf("ErrorCode(%v) = %v, not a §12 code", e, c)
		}
	}
}

func TestBulkFake(t *testing.T) {
	rec, err := os.ReadFile(filepath.Join("testdata", "errors", "bulk_mixed.json"))
	if err != nil {
		t.Fatal(err)
	}
	a := fakeOpenSearch(t, fakeReply{200, string(rec), nil})
	n, err := a.Delete(context.Background(), []string{"1", "nope", "2"})
	if n != 0 {
		t.Errorf("deleted = %d, want 0 (the recorded items hold no deleted result)", n)
	}
	if got := a.ErrorCode(err); got != rcp.CodeInvalidParams {
		t.Errorf("first failed item: ErrorCode = %v (err %v)", got, err)
	}
	okDeletes := `{"errors":false,"items":[{"delete":{"_id":"a","status":200,"result":"deleted"}},{"delete":{"_id":"b","status":404,"result":"not_found"}},{"delete":{"_id":"c","status":200,"result":"deleted"}}]}`
	a = fakeOpenSearch(t, fakeReply{200, okDeletes, nil})
	if n, err := a.Delete(context.Background(), []string{"a", "b", "c"}); n != 2 || err != nil {
		t.Errorf("Delete = %d, %v; want 2, nil (not_found is not an error and not counted)", n, err)
	}
}

// TestProbeRefusalsFake serves the recorded probe bodies by path, with
// some calls refused: optional ones leave the feature unproven, required
// ones fail the probe with their own code.
func TestProbeRefusalsFake(t *testing.T) {
	rec := loadProbe(t, "")
	bodies := map[string][]byte{"/": rec.Root, "/_cat/plugins": rec.Plugins, "/probe-fixture/_mapping": rec.Mapping,
		"/probe-fixture/_settings": rec.Settings, "/_search/pipeline": rec.Pipelines,
		"/_cluster/settings": rec.Cluster, "/probe-fixture/_count": rec.Count}
	forbidden := `{"error":{"type":"security_exception","reason":"no permissions"},"status":403}`
	tests := []struct {
		name   string
		refuse []string
		code   rcp.Code // 0: the probe succeeds
	}{
		{name: "all allowed"},
		{name: "cluster calls refused", refuse: []string{"/_cat/plugins", "/_cluster/settings", "/_search/pipeline"}},
		{name: "mapping refused", refuse: []string{"/probe-fixture/_mapping"}, code: rcp.CodeUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				for _, p := range tc.refuse {
					if r.URL.Path == p {
						w.WriteHeader(http.StatusForbidden)
						_, _ = w.Write([]byte(forbidden))
						return
					}
				}
				_, _ = w.Write(bodies[r.URL.Path])
			}))
			defer srv.Close()
			cfg := testConfig()
			cfg.URLs = []string{srv.URL}
			a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			ev, err := a.Probe(context.Background())
			if tc.code != 0 {
				if got := a.ErrorCode(err); got != tc.code {
					t.Errorf("ErrorCode = %v, want %v (err %v)", got, tc.code, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The knn_vector mapping itself proves the k-NN plugin.
			if len(ev.VectorFields) != 1 || !ev.VectorFields[0].Indexed || len(ev.TextFields) != 2 {
				t.Errorf("evidence lost fields: vectors %+v text %+v", ev.VectorFields, ev.TextFields)
			}
		})
	}
}

// TestShardFailuresArePartial: an answer with failed shards keeps its
// code but is an adapters.PartialFailure (the breaker does not count it);
// a whole-request failure is not.
func TestShardFailuresArePartial(t *testing.T) {
	sr := &dsl.SearchResponse{}
	sr.Shards.Total, sr.Shards.Failed = 3, 1
	sr.Shards.Failures = []json.RawMessage{json.RawMessage(`{"shard":1,"index":"x","reason":{"type":"node_not_connected_exception","reason":"node not connected"}}`)}
	var pf adapters.PartialFailure
	if err := incomplete(sr, "POST /x/_search"); !errors.As(err, &pf) || !pf.PartialFailure() {
		t.Errorf("failed shards: %v is not a partial failure", err)
	}
	// OpenSearch 3.5's answer when a primary without replica was on a node
	// that left: the shard is in total, in neither successful nor failed.
	missing, err := dsl.DecodeSearch([]byte(`{"timed_out":false,"_shards":{"total":3,"successful":2,"skipped":0,"failed":0},"hits":{"hits":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := incomplete(missing, "POST /x/_search"); !errors.As(err, &pf) || !pf.PartialFailure() || classify(err) != rcp.CodeBackendUnavailable {
		t.Errorf("a shard with no started copy: %v, want a partial failure answered -32010", err)
	}
	// A node that leaves while its shards answer: unavailable, as on
	// Elasticsearch, not an internal error.
	for _, typ := range []string{"node_disconnected_exception", "node_closed_exception", "connect_transport_exception"} {
		left := &dsl.SearchResponse{}
		left.Shards.Total, left.Shards.Successful, left.Shards.Failed = 3, 2, 1
		left.Shards.Failures = []json.RawMessage{json.RawMessage(`{"shard":1,"index":"x","reason":{"type":"` + typ + `","reason":"gone"}}`)}
		if err := incomplete(left, "POST /x/_search"); classify(err) != rcp.CodeBackendUnavailable {
			t.Errorf("a shard failure %s: code %v, want -32010", typ, classify(err))
		}
	}
	// OpenSearch 3.5's answer when the search timeout hits in every shard.
	allTimedOut := &Error{Status: 500, Cause: &dsl.ErrorCause{Type: "search_phase_execution_exception", Reason: "all shards failed",
		RootCause: []dsl.ErrorCause{{Type: "time_exceeded_exception"}}}}
	if code := classify(allTimedOut); code != rcp.CodeTimeout {
		t.Errorf("every shard timed out: code %v, want -32014", code)
	}
	whole := &Error{Status: 503, Cause: &dsl.ErrorCause{Type: "search_phase_execution_exception", Reason: "all shards failed"}}
	if whole.PartialFailure() {
		t.Error("a whole-request 503 is a partial failure")
	}
}
