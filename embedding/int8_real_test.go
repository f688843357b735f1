package embedding

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
)

// TestInt8AgainstRealServer asks the int8 front of integration/embed
// (RCP_EMBED_INT8_URL) for int8 embeddings: every value is an integer in
// [-128, 127], and each int8 vector points the way the same model's float
// vector for the text does.
func TestInt8AgainstRealServer(t *testing.T) {
	float, dim := realEmbedder(t, 8)
	url := os.Getenv("RCP_EMBED_INT8_URL")
	if url == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal("RCP_EMBED_INT8_URL is unset but RCP_REQUIRE_ENGINES is set: run integration/embed/start.sh and source integration/.work/embed.env")
		}
		t.Skip("SKIPPING: RCP_EMBED_INT8_URL is unset (run integration/embed/start.sh)")
	}
	opts := float.opts
	opts.BaseURL, opts.Element, opts.HTTPClient = url, capability.ElementInt8, nil
	int8, err := NewOpenAI(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := int8.Probe(context.Background()); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	texts := []string{"Europa may hide an ocean under its ice.", "a short espresso", "the borrow checker"}
	iv, err := int8.Embed(context.Background(), texts, KindDocument)
	if err != nil {
		t.Fatal(err)
	}
	fv, err := float.Embed(context.Background(), texts, KindDocument)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if len(iv[i]) != dim {
			t.Fatalf("text %d: %d values, want %d", i, len(iv[i]), dim)
		}
		for j, x := range iv[i] {
			if float64(x) != math.Trunc(float64(x)) || x < -128 || x > 127 {
				t.Fatalf("text %d value %d = %g, not an int8 integer", i, j, x)
			}
		}
		if c := cosine(iv[i], fv[i]); c < 0.99 {
			t.Errorf("text %d: cosine(int8, float) = %.4f, want ≥ 0.99 (the same model's vector)", i, c)
		}
	}
}
