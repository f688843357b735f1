package elasticsearch_test

import (
	"context"
	"os"
	"path/filepath"
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

// scifactDir is $RCP_SCIFACT_DIR or the dataset beside the repository.
func scifactDir() string {
	if d := os.Getenv("RCP_SCIFACT_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "datasets", "scifact")
}

// TestSciFactSparseFidelity runs the first 30 SciFact test queries
// through the sidecar and directly with the equivalent multi_match, and
// requires identical ids in identical order (k=100).
func TestSciFactSparseFidelity(t *testing.T) {
	url := os.Getenv("RCP_ES_URL")
	if url == "" {
		requireOrSkip(t, "RCP_ES_URL is not set (run integration/elasticsearch/start.sh)")
	}
	dir := scifactDir()
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl.gz")); err != nil {
		requireOrSkip(t, "SciFact dataset not found at "+dir+" (set RCP_SCIFACT_DIR)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := beir.Prepare(ctx, beir.Options{Engine: "elasticsearch", URL: url, Index: "rcp-scifact-test",
		DataDir: dir, K: 100, Queries: 30})
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
	if r.NDCGSidecar != r.NDCGDirect || r.NDCGSidecar < 0.4 {
		t.Errorf("nDCG@10 sidecar %.4f direct %.4f", r.NDCGSidecar, r.NDCGDirect)
	}
}
