package elasticsearch_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// requireOrSkip skips loudly, or fails under RCP_REQUIRE_ENGINES.
func requireOrSkip(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
		t.Fatal(why + " (RCP_REQUIRE_ENGINES is set)")
	}
	t.Skip("SKIPPING: " + why)
}

// TestSciFactSparseFidelity runs the first 30 SciFact test queries
// through the sidecar and directly with the equivalent multi_match, and
// requires identical ids in identical order (k=100) and equal nDCG@10.
// SciFact is found by beir.Locate ($RCP_SCIFACT_DIR, beside the
// repository, the cache, a download); without it the same comparison
// runs on beir's generated corpus and only the nDCG check is skipped.
func TestSciFactSparseFidelity(t *testing.T) {
	url := os.Getenv("RCP_ES_URL")
	if url == "" {
		requireOrSkip(t, "RCP_ES_URL is not set (run integration/elasticsearch/start.sh)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ds, src, err := beir.FidelityData(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dataset: %s", src.About)
	s, err := beir.Prepare(ctx, beir.Options{Engine: "elasticsearch", URL: url, Index: "rcp-" + src.Name + "-test",
		Dataset: ds, K: 100, Queries: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Fidelity(ctx, rcp.ModeSparse)
	if err != nil {
		t.Fatal(err)
	}
	if r.Queries != 30 || r.Identical != r.Queries {
		t.Fatalf("%d of %d queries identical: %v", r.Identical, r.Queries, r.Diffs)
	}
	if !src.Judged() {
		t.Logf("nDCG@10 SKIPPED: the %s corpus has no relevance judgements; ids and order were compared (%d/%d identical)",
			src.Name, r.Identical, r.Queries)
		return
	}
	t.Logf("nDCG@10 sidecar %.4f direct %.4f", r.NDCGSidecar, r.NDCGDirect)
	if r.NDCGSidecar != r.NDCGDirect || r.NDCGSidecar < 0.4 {
		t.Errorf("nDCG@10 sidecar %.4f direct %.4f", r.NDCGSidecar, r.NDCGDirect)
	}
}
