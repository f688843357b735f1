package embedding

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"
)

// realEmbedder returns an OpenAI client for the server named by
// RCP_EMBED_URL (see integration/embed/start.sh), or skips the test.
func realEmbedder(t testing.TB, batch int) (*OpenAI, int) {
	t.Helper()
	url := os.Getenv("RCP_EMBED_URL")
	if url == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal("RCP_EMBED_URL is unset but RCP_REQUIRE_ENGINES is set: run integration/embed/start.sh and source integration/.work/embed.env")
		}
		t.Skip("SKIPPING real embedding server test: RCP_EMBED_URL is unset (run integration/embed/start.sh and source integration/.work/embed.env)")
	}
	dim, err := strconv.Atoi(os.Getenv("RCP_EMBED_DIM"))
	if err != nil || dim <= 0 {
		t.Fatalf("RCP_EMBED_DIM=%q must be a positive integer", os.Getenv("RCP_EMBED_DIM"))
	}
	opts := OpenAIOptions{BaseURL: url, Model: os.Getenv("RCP_EMBED_MODEL"), Dimension: dim,
		BatchSize: batch, Timeout: 2 * time.Minute}
	if os.Getenv("RCP_EMBED_INPUT_TYPE") == "1" {
		opts.SendInputType = true // the server applies the e5 prefixes itself
	} else {
		opts.QueryPrefix, opts.DocumentPrefix = "query: ", "passage: "
	}
	o, err := NewOpenAI(opts)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return o, dim
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func embedOne(t *testing.T, o *OpenAI, text, kind string) []float32 {
	t.Helper()
	v, err := o.Embed(context.Background(), []string{text}, kind)
	if err != nil {
		t.Fatalf("Embed(%q, %q): %v", text, kind, err)
	}
	return v[0]
}

func TestOpenAIAgainstRealServer(t *testing.T) {
	o, dim := realEmbedder(t, 8)
	ctx := context.Background()

	t.Run("dimension", func(t *testing.T) {
		v := embedOne(t, o, "dimension check", KindQuery)
		if len(v) != dim || o.Dimension() != dim {
			t.Fatalf("vector has %d floats, Dimension() %d, want %d", len(v), o.Dimension(), dim)
		}
	})

	t.Run("deterministic", func(t *testing.T) {
		a := embedOne(t, o, "the same text twice", KindDocument)
		b := embedOne(t, o, "the same text twice", KindDocument)
		if c := cosine(a, b); c < 0.99999 {
			t.Fatalf("two embeddings of one text differ: cosine %.6f", c)
		}
	})

	t.Run("batches beyond BatchSize keep order", func(t *testing.T) {
		in := make([]string, 3*o.BatchLimit()+3)
		for i := range in {
			in[i] = fmt.Sprintf("document number %d talks about topic %d", i, i*7)
		}
		got, err := o.Embed(ctx, in, KindDocument)
		if err != nil || len(got) != len(in) {
			t.Fatalf("Embed: %d vectors, err %v", len(got), err)
		}
		for _, i := range []int{0, o.BatchLimit(), len(in) - 1} {
			if c := cosine(got[i], embedOne(t, o, in[i], KindDocument)); c < 0.999 {
				t.Errorf("batched vector %d does not match its single embedding: cosine %.4f", i, c)
			}
		}
	})

	t.Run("query and passage differ", func(t *testing.T) {
		q := embedOne(t, o, "protein intake for athletes", KindQuery)
		p := embedOne(t, o, "protein intake for athletes", KindDocument)
		if c := cosine(q, p); c > 0.9999 {
			t.Fatalf("query and passage embeddings are identical (cosine %.6f): prefixes not applied", c)
		}
	})

	t.Run("similar beats unrelated", func(t *testing.T) {
		q := embedOne(t, o, "how much protein should an adult eat per day", KindQuery)
		docs, err := o.Embed(ctx, []string{
			"Adults should eat about 0.8 grams of protein per kilogram of body weight each day.",
			"The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
		}, KindDocument)
		if err != nil {
			t.Fatalf("Embed: %v", err)
		}
		if rel, unrel := cosine(q, docs[0]), cosine(q, docs[1]); rel <= unrel {
			t.Fatalf("cosine(related)=%.4f <= cosine(unrelated)=%.4f", rel, unrel)
		}
	})
}

// BenchmarkOpenAIReal measures texts/s against the real server (short
// texts, default batch size): go test -bench OpenAIReal -run ^$ ./embedding/
func BenchmarkOpenAIReal(b *testing.B) {
	o, _ := realEmbedder(b, 0)
	in := make([]string, 64)
	for i := range in {
		in[i] = fmt.Sprintf("passage %d: a short sentence about retrieval, ranking and embeddings", i)
	}
	for b.Loop() {
		if _, err := o.Embed(context.Background(), in, KindDocument); err != nil {
			b.Fatalf("Embed: %v", err)
		}
	}
	b.ReportMetric(float64(b.N*len(in))/b.Elapsed().Seconds(), "texts/s")
}
