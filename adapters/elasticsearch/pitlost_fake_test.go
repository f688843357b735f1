package elasticsearch

// A point in time that loses a shard copy (a node of the cluster dies):
// the engine's answers, shaped like Elasticsearch 8.x documents (a 200
// with failed shards whose reason is search_context_missing_exception or
// node_not_connected_exception; a 404 when the context is gone on every
// shard), served by the FAKE engine of rerank_fake_test.go. A real
// single test node cannot lose a shard copy.

import (
	"context"
	"errors"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

const (
	pitOpen   = "POST /probe-fixture-a/_pit"
	pitSearch = "POST /_search"
	pitQuery  = `{"query":"moon","mode":"sparse","k":1`
)

func pitFake(t *testing.T) (*rerankFake, *retrieval.Engine) {
	t.Helper()
	f := newRerankFake(t, map[string]string{pitOpen: "pit/open", pitSearch: "pit/search-ok",
		"DELETE /_pit": "pit/open"})
	e := engineOn(t, f.open(t, func(c *Config) { c.PIT = true }))
	return f, e
}

func retrieveErr(t *testing.T, e *retrieval.Engine, js string) (*rcp.RetrieveResult, *rcp.Error) {
	t.Helper()
	res, err := e.Retrieve(context.Background(), retrieveParams(t, js))
	if err == nil {
		return res, nil
	}
	var re *rcp.Error
	if !errors.As(err, &re) {
		t.Fatalf("retrieve %s: %v is not an *rcp.Error", js, err)
	}
	return nil, re
}

// wantFinal checks err is code with data.retryable false on the wire.
func wantFinal(t *testing.T, err *rcp.Error, code rcp.Code) {
	t.Helper()
	if err == nil || err.Code != code {
		t.Fatalf("err = %v, want %v", err, code)
	}
	if d := err.WireData(); d == nil || d.Retryable == nil || *d.Retryable {
		t.Errorf("data %+v: want retryable false (the same request cannot succeed)", d)
	}
}

// TestPITFirstPageLostShardReopensRecorded: the point in time opened for
// a first page loses a shard copy before the search: the page is served
// from a fresh one (no search_after yet, so exactly), and usage.notes
// says so.
func TestPITFirstPageLostShardReopensRecorded(t *testing.T) {
	for _, lost := range []string{"pit/search-shard-lost", "pit/search-shard-node-gone", "pit/search-context-missing"} {
		t.Run(lost, func(t *testing.T) {
			f, e := pitFake(t)
			f.queue(pitSearch, lost)
			res, err := retrieveErr(t, e, pitQuery+`}`)
			if err != nil {
				t.Fatalf("first page: %v", err)
			}
			if f.calls(pitOpen) != 2 || len(res.Hits) != 1 || res.Hits[0].ID != "doc_2" || res.IndexVersion == "" {
				t.Errorf("opens %d hits %v indexVersion %q", f.calls(pitOpen), ids(res.Hits), res.IndexVersion)
			}
			if res.Usage == nil || !containsNote(res.Usage.Notes, "lost a shard copy") {
				t.Errorf("usage %+v: want a note on the re-opened point in time", res.Usage)
			}
		})
	}
}

// TestPITContinuationLostShardRecorded: a continuation whose point in time
// lost a shard copy ends with -32015 (expired cursor, not retryable, §10,
// §12.2): a fresh point in time would page another snapshot, so
// search_after from the old one is not exact.
func TestPITContinuationLostShardRecorded(t *testing.T) {
	for _, lost := range []string{"pit/search-shard-lost", "pit/search-shard-node-gone", "pit/search-context-missing"} {
		t.Run(lost, func(t *testing.T) {
			f, e := pitFake(t)
			p1, err := retrieveErr(t, e, pitQuery+`}`)
			if err != nil || p1.NextCursor == "" {
				t.Fatalf("page 1: %v cursor %q", err, p1.NextCursor)
			}
			f.queue(pitSearch, lost)
			_, err = retrieveErr(t, e, pitQuery+`,"cursor":"`+p1.NextCursor+`"}`)
			wantFinal(t, err, rcp.CodeNotFound)
			if f.calls(pitOpen) != 1 {
				t.Errorf("opens %d: a continuation must not re-open", f.calls(pitOpen))
			}
		})
	}
}

// TestPITPinnedLostShardRecorded: a pinned indexVersion whose point in
// time lost a shard copy (or lapsed) is -32016 (§12.1), never another
// snapshot and never a retryable error.
func TestPITPinnedLostShardRecorded(t *testing.T) {
	for _, lost := range []string{"pit/search-shard-lost", "pit/search-context-missing"} {
		t.Run(lost, func(t *testing.T) {
			f, e := pitFake(t)
			p1, err := retrieveErr(t, e, pitQuery+`}`)
			if err != nil || p1.IndexVersion == "" {
				t.Fatalf("page 1: %v indexVersion %q", err, p1.IndexVersion)
			}
			f.queue(pitSearch, lost)
			_, err = retrieveErr(t, e, `{"query":"moon","mode":"sparse","k":5,"indexVersion":"`+p1.IndexVersion+`"}`)
			wantFinal(t, err, rcp.CodeConflict)
			if f.calls(pitOpen) != 1 {
				t.Errorf("opens %d: a pinned snapshot is never replaced", f.calls(pitOpen))
			}
		})
	}
}

// TestPITShardRejectedStaysRetryableRecorded: a shard failure that is not
// a lost copy (a rejected execution) under a point in time keeps the
// transient -32010: retrying the same cursor may succeed.
func TestPITShardRejectedStaysRetryableRecorded(t *testing.T) {
	f, e := pitFake(t)
	p1, err := retrieveErr(t, e, pitQuery+`}`)
	if err != nil {
		t.Fatal(err)
	}
	f.queue(pitSearch, "pit/search-shard-rejected")
	_, err = retrieveErr(t, e, pitQuery+`,"cursor":"`+p1.NextCursor+`"}`)
	if err == nil || err.Code != rcp.CodeBackendUnavailable {
		t.Fatalf("err = %v, want -32010", err)
	}
	if d := err.WireData(); d == nil || d.Retryable == nil || !*d.Retryable {
		t.Errorf("data %+v: want retryable", d)
	}
}
