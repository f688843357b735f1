package qdrant_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
	"github.com/rcp-sidecar/rcp-sidecar/embedding"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// sciFact is the SciFact test split as beir.FidelityData finds it
// ($RCP_SCIFACT_DIR, beside the repository, the cache, a download; CC
// BY-NC, never copied into the repository), or beir's generated corpus
// when none is available, in which case only nDCG is not compared.
func sciFact(ctx context.Context, t *testing.T) (*beir.Dataset, beir.Source) {
	t.Helper()
	ds, src, err := beir.FidelityData(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dataset: %s", src.About)
	return ds, src
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
func fidelity(ctx context.Context, t *testing.T, s *beir.Setup, src beir.Source, mode rcp.Mode) {
	t.Helper()
	r, err := s.Fidelity(ctx, mode)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %s on %s, %d queries (k=100): identical ids and order %d/%d; nDCG@10 sidecar %.4f direct %.4f",
		src.Name, mode, s.Label(), r.Queries, r.Identical, r.Queries, r.NDCGSidecar, r.NDCGDirect)
	if !r.HasDirect || r.Queries == 0 || r.Identical != r.Queries {
		t.Fatalf("%s: %d of %d queries identical: %v", mode, r.Identical, r.Queries, r.Diffs)
	}
	if !src.Judged() {
		t.Logf("nDCG@10 SKIPPED: the %s corpus has no relevance judgements", src.Name)
		return
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ds, src := sciFact(ctx, t)
	drop(t, addr, "rcp_scifact_sparse")
	s, err := beir.Prepare(ctx, beir.Options{Engine: beir.QdrantName, URL: addr, Index: "rcp_scifact_sparse",
		Dataset: ds, K: 100, Queries: sciFactQueries()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fidelity(ctx, t, s, src, rcp.ModeSparse)
}

// TestSciFactDenseFidelity does the same for dense retrieval with the
// embedding server, over a pool of the first RCP_SCIFACT_DENSE_DOCS (default
// 200) documents plus every document judged for the queries: the 2-core
// embedding server embeds a few hundred SciFact documents a minute at
// best, too slow for the whole corpus on every run (vectors are cached in
// $RCP_CACHE/scifact, so later runs embed nothing).
func TestSciFactDenseFidelity(t *testing.T) {
	addr := liveAddr(t)
	emb := envEmbedder(t)
	docs := 200
	if n, err := strconv.Atoi(os.Getenv("RCP_SCIFACT_DENSE_DOCS")); err == nil && n > 0 {
		docs = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	ds, src := sciFact(ctx, t)
	variant := "prefix"
	if os.Getenv("RCP_EMBED_INPUT_TYPE") == "1" {
		variant = "input_type"
	}
	drop(t, addr, "rcp_scifact_dense")
	s, err := beir.Prepare(ctx, beir.Options{Engine: beir.QdrantName, URL: addr, Index: "rcp_scifact_dense",
		Dataset: ds, K: 100, Queries: sciFactQueries(), MaxDocs: docs, Embedder: beir.MemoQueries(emb), EmbedVariant: variant})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fidelity(ctx, t, s, src, rcp.ModeDense)
}
