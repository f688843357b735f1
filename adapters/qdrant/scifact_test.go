package qdrant_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
	"github.com/rcp-sidecar/rcp-sidecar/embedding"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// scifactDir is $RCP_SCIFACT_DIR or the dataset beside the repository
// (CC BY-NC: read from there, never copied into the repository).
func scifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RCP_SCIFACT_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "datasets", "scifact")
	}
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl.gz")); err != nil {
		requireEngine(t, "SciFact dataset not found at "+dir+" (set RCP_SCIFACT_DIR)")
	}
	return dir
}

// envEmbedder is the embedding server of integration/embed (RCP_EMBED_*).
func envEmbedder(t *testing.T) adapters.Embedder {
	t.Helper()
	url := os.Getenv("RCP_EMBED_URL")
	if url == "" {
		requireEngine(t, "RCP_EMBED_URL is unset (run integration/embed/start.sh and source integration/.work/embed.env)")
	}
	dim, _ := strconv.Atoi(os.Getenv("RCP_EMBED_DIM"))
	o := embedding.OpenAIOptions{BaseURL: url, Model: os.Getenv("RCP_EMBED_MODEL"), Dimension: dim,
		SendInputType: os.Getenv("RCP_EMBED_INPUT_TYPE") == "1", Timeout: 5 * time.Minute}
	if !o.SendInputType {
		o.QueryPrefix, o.DocumentPrefix = "query: ", "passage: "
	}
	emb, err := embedding.NewOpenAI(o)
	if err != nil {
		t.Fatal(err)
	}
	return emb
}

// drop deletes collection at addr when the test ends.
func drop(t *testing.T, addr, collection string) {
	cli := client(t, addr)
	t.Cleanup(func() { _ = cli.DeleteCollection(context.Background(), collection) })
}

// sciFactQueries is RCP_SCIFACT_QUERIES or 30.
func sciFactQueries() int {
	if n, err := strconv.Atoi(os.Getenv("RCP_SCIFACT_QUERIES")); err == nil && n > 0 {
		return n
	}
	return 30
}

// fidelity checks that every query returns identical ids in identical
// order through the sidecar and through go-client directly.
func fidelity(ctx context.Context, t *testing.T, s *beir.Setup, mode rcp.Mode) {
	t.Helper()
	r, err := s.Fidelity(ctx, mode)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SciFact %s on %s, %d queries (k=100): identical ids and order %d/%d; nDCG@10 sidecar %.4f direct %.4f",
		mode, s.Label(), r.Queries, r.Identical, r.Queries, r.NDCGSidecar, r.NDCGDirect)
	if !r.HasDirect || r.Queries == 0 || r.Identical != r.Queries {
		t.Fatalf("%s: %d of %d queries identical: %v", mode, r.Identical, r.Queries, r.Diffs)
	}
	if r.NDCGSidecar != r.NDCGDirect {
		t.Errorf("%s: nDCG@10 sidecar %.4f direct %.4f", mode, r.NDCGSidecar, r.NDCGDirect)
	}
}

// TestSciFactSparseFidelity loads the whole SciFact corpus into Qdrant's
// engine (qdrant/bm25 sparse vectors, written through the adapter) and runs
// the first test queries through the sidecar and as the plain go-client
// query a user would send: identical ids in identical order (k=100).
func TestSciFactSparseFidelity(t *testing.T) {
	addr := liveAddr(t)
	dir := scifactDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	drop(t, addr, "rcp_scifact_sparse")
	s, err := beir.Prepare(ctx, beir.Options{Engine: beir.QdrantName, URL: addr, Index: "rcp_scifact_sparse",
		DataDir: dir, K: 100, Queries: sciFactQueries()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fidelity(ctx, t, s, rcp.ModeSparse)
}

// TestSciFactDenseFidelity does the same for dense retrieval with the
// embedding server, over a pool of the first RCP_SCIFACT_DENSE_DOCS (default
// 200) documents plus every document judged for the queries: the 2-core
// embedding server embeds a few hundred SciFact documents a minute at
// best, too slow for the whole corpus on every run (vectors are cached in
// $RCP_CACHE/scifact, so later runs embed nothing).
func TestSciFactDenseFidelity(t *testing.T) {
	addr := liveAddr(t)
	dir := scifactDir(t)
	emb := envEmbedder(t)
	docs := 200
	if n, err := strconv.Atoi(os.Getenv("RCP_SCIFACT_DENSE_DOCS")); err == nil && n > 0 {
		docs = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	variant := "prefix"
	if os.Getenv("RCP_EMBED_INPUT_TYPE") == "1" {
		variant = "input_type"
	}
	drop(t, addr, "rcp_scifact_dense")
	s, err := beir.Prepare(ctx, beir.Options{Engine: beir.QdrantName, URL: addr, Index: "rcp_scifact_dense",
		DataDir: dir, K: 100, Queries: sciFactQueries(), MaxDocs: docs, Embedder: beir.MemoQueries(emb), EmbedVariant: variant})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fidelity(ctx, t, s, rcp.ModeDense)
}
