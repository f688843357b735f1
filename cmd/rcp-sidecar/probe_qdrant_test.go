package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	qdrantgo "github.com/qdrant/go-client/qdrant"
)

// TestProbeQdrant runs `probe --json` against Qdrant's engine (the front
// over Qdrant Edge at RCP_QDRANT_ADDR, from integration/qdrant/start.sh):
// every capability comes with its reason, and the evidence is what the
// collection holds — a 4-d cosine vector, an IDF sparse vector served by
// qdrant/bm25, indexed payload.
func TestProbeQdrant(t *testing.T) {
	addr := os.Getenv("RCP_QDRANT_ADDR")
	if addr == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal("RCP_QDRANT_ADDR is unset but RCP_REQUIRE_ENGINES is set (run integration/qdrant/start.sh)")
		}
		t.Skip("SKIPPING: RCP_QDRANT_ADDR is unset (run integration/qdrant/start.sh)")
	}
	c := qdrantClient(t, addr)
	ctx := context.Background()
	name := fmt.Sprintf("rcp_probe_%d", os.Getpid())
	idf, wait := qdrantgo.Modifier_Idf, true
	_ = c.DeleteCollection(ctx, name)
	t.Cleanup(func() { _ = c.DeleteCollection(context.Background(), name) })
	if err := c.CreateCollection(ctx, &qdrantgo.CreateCollection{CollectionName: name,
		VectorsConfig: qdrantgo.NewVectorsConfigMap(map[string]*qdrantgo.VectorParams{
			"dense": {Size: 4, Distance: qdrantgo.Distance_Cosine}}),
		SparseVectorsConfig: qdrantgo.NewSparseVectorsConfig(map[string]*qdrantgo.SparseVectorParams{"bm25": {Modifier: &idf}})}); err != nil {
		t.Fatal(err)
	}
	ft := qdrantgo.FieldType_FieldTypeKeyword
	if _, err := c.CreateFieldIndex(ctx, &qdrantgo.CreateFieldIndexCollection{CollectionName: name, FieldName: "lang", FieldType: &ft, Wait: &wait}); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir() + "/qdrant.yaml"
	writeFile(t, cfg, "backends:\n  - name: docs\n    engine: qdrant\n    settings:\n      address: "+addr+
		"\n      collection: "+name+"\n      vector: dense\n      sparse_vector: bm25\n      sparse_model: qdrant/bm25\n      title_field: title\n")
	r, out := probeJSON(t, "--config", cfg)
	if r.Evidence.Engine != "qdrant" || len(r.Evidence.VectorFields) != 1 || r.Capabilities["retrieve"] == nil || r.Capabilities["filter"] == nil {
		t.Fatalf("probe report: %s", out)
	}
	// Sparse is served by server-side bm25; dense needs an embedder of 4
	// dims, which this config lacks, and the reason must say so.
	if !strings.Contains(string(r.Capabilities["retrieve"]), `"sparse"`) || strings.Contains(string(r.Capabilities["retrieve"]), `"dense"`) {
		t.Errorf("retrieve capability: %s", r.Capabilities["retrieve"])
	}
	if !strings.Contains(strings.ToLower(out), "embedder") {
		t.Errorf("no reason mentions the missing embedder: %+v", r.Reasons)
	}
}
