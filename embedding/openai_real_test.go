package embedding

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// realEmbedder returns an OpenAI client for the server named by
// RCP_EMBED_URL (see integration/embed/start.sh), or skips the test;
// mod, when given, changes its options.
func realEmbedder(t testing.TB, batch int, mod ...func(*OpenAIOptions)) (*OpenAI, int) {
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
	for _, m := range mod {
		m(&opts)
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

// TestBase64AgainstRealServer checks, on the real server, that vectors
// asked for in base64 (the default) are the float32 values of the same
// vectors asked for as arrays, bit for bit, and that the server did
// answer in base64: each answer the client read held a string embedding.
func TestBase64AgainstRealServer(t *testing.T) {
	var packed, arrays int
	var mu sync.Mutex
	seen := func(p *OpenAIOptions) {
		p.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := http.DefaultTransport.RoundTrip(r)
			if err != nil {
				return nil, err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			var a struct {
				Data []struct {
					Embedding json.RawMessage `json:"embedding"`
				} `json:"data"`
			}
			if json.Unmarshal(body, &a) == nil {
				mu.Lock()
				for _, d := range a.Data {
					if len(d.Embedding) > 0 && d.Embedding[0] == '"' {
						packed++
					} else {
						arrays++
					}
				}
				mu.Unlock()
			}
			return resp, err
		})}
	}
	b64, dim := realEmbedder(t, 8, seen)
	floats, _ := realEmbedder(t, 8, func(p *OpenAIOptions) { p.EncodingFormat = FormatFloat })
	in := make([]string, 20)
	for i := range in {
		in[i] = fmt.Sprintf("sentence %d on topic %d, with some words: %s", i, i*13%7, strings.Repeat("é", i%3))
	}
	for _, kind := range []string{KindQuery, KindDocument} {
		got, err := b64.Embed(context.Background(), in, kind)
		if err != nil {
			t.Fatal(err)
		}
		want, err := floats.Embed(context.Background(), in, kind)
		if err != nil {
			t.Fatal(err)
		}
		for i := range in {
			if len(got[i]) != dim || len(want[i]) != dim {
				t.Fatalf("%s %d: %d and %d values, want %d", kind, i, len(got[i]), len(want[i]), dim)
			}
			for j := range got[i] {
				if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
					t.Fatalf("%s %d value %d: base64 %x, float %x", kind, i, j, math.Float32bits(got[i][j]), math.Float32bits(want[i][j]))
				}
			}
		}
	}
	if packed != 2*len(in) || arrays != 0 {
		t.Fatalf("the server answered %d base64 and %d array embeddings to base64 requests, want %d and 0", packed, arrays, 2*len(in))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

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
