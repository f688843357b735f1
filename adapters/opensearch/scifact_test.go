package opensearch_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestSciFactSparseFidelity loads SciFact into the live node and checks,
// query by query, that sparse retrieval through the sidecar (Engine over
// this adapter) returns exactly the ids, in the same order, as the same
// multi_match sent to OpenSearch directly; it reports nDCG@10 of both.
// RCP_SCIFACT_QUERIES sets how many test queries run (default 30; 300 is
// the whole test split). k and candidateK are 10 so both sides fetch the
// same window and the logged latencies compare the adapter's overhead
// only. SciFact is found by beir.Locate ($RCP_SCIFACT_DIR, beside the
// repository, the cache, a download); without it the same comparison
// runs on beir's generated corpus and only nDCG is skipped.
func TestSciFactSparseFidelity(t *testing.T) {
	base := os.Getenv("RCP_OS_URL")
	if base == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal("RCP_OS_URL is unset but RCP_REQUIRE_ENGINES is set: run integration/opensearch/start.sh and source integration/.work/opensearch.env")
		}
		t.Skip("SKIPPED: no live OpenSearch (set RCP_OS_URL; integration/opensearch/start.sh starts one)")
	}
	n := 30
	if v, err := strconv.Atoi(os.Getenv("RCP_SCIFACT_QUERIES")); err == nil && v > 0 {
		n = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ds, src, err := beir.FidelityData(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dataset: %s", src.About)
	s, err := beir.Prepare(ctx, beir.Options{Engine: "opensearch", URL: base, Index: "rcp-" + src.Name + "-test",
		Dataset: ds, K: 10, Queries: n})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Fidelity(ctx, rcp.ModeSparse)
	if err != nil {
		t.Fatal(err)
	}
	if r.Queries != min(n, len(ds.Queries)) || r.Identical != r.Queries {
		t.Errorf("%d of %d queries identical: %v", r.Identical, r.Queries, r.Diffs)
	}
	t.Logf("%s sparse, %d queries: identical ids/order %d/%d", src.Name, r.Queries, r.Identical, r.Queries)
	t.Logf("mean latency: direct %v, sidecar %v (sequential, same node)",
		r.DirectTime/time.Duration(r.Queries), r.SidecarTime/time.Duration(r.Queries))
	if !src.Judged() {
		t.Logf("nDCG@10 SKIPPED: the %s corpus has no relevance judgements", src.Name)
		return
	}
	t.Logf("nDCG@10 direct %.4f sidecar %.4f", r.NDCGDirect, r.NDCGSidecar)
	if r.NDCGSidecar != r.NDCGDirect {
		t.Errorf("nDCG@10 sidecar %.4f differs from direct %.4f", r.NDCGSidecar, r.NDCGDirect)
	}
	if r.Queries == 300 && r.NDCGDirect < 0.6 {
		t.Errorf("direct nDCG@10 %.4f is far below BM25's published 0.665: the index is wrong", r.NDCGDirect)
	}
}
