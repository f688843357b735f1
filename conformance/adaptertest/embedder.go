package adaptertest

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
)

// FakeIdentity is the embed.identity of the fake embedder.
const FakeIdentity = "adaptertest-fake-8d"

// Named query texts the fake embedder maps to fixed vectors.
const (
	// QueryEverything has only positive components, so every corpus
	// document has a positive cosine with it (filter ID-set checks).
	QueryEverything = "everything"
	// QueryCoffee, QueryCode and QueryTravelFood have a known cosine
	// order over the corpus with no ties in the top ten.
	QueryCoffee     = "topic:coffee"
	QueryCode       = "topic:code"
	QueryTravelFood = "topic:travel-food"
	// QueryNotCoffee points away from the coffee documents: their cosine
	// with it is negative (true cosine scores go below zero).
	QueryNotCoffee = "topic:not-coffee"
)

// namedVectors are the fixed query vectors, by query text.
var namedVectors = map[string][]float32{
	QueryEverything: {8, 7, 6, 5, 4, 3, 2, 1},
	QueryCoffee:     {1, 0.1, 0, 0, 0, 0, 0, 0},
	QueryCode:       {0, 0, 0, 1, 0, 0, 0.3, 0.1},
	QueryTravelFood: {0, 0, 1, 0, 1, 0, 0.1, 0},
	QueryNotCoffee:  {-1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
}

// fakeEmbedder is a FAKE embedding model for tests: it is deterministic and
// knows the corpus, so dense results are reproducible and known in advance.
type fakeEmbedder struct {
	byText map[string][]float32
}

// Embedder returns the FAKE, deterministic 8-d embedder the suite uses:
// "vec:<id>" and a document's Unique term map to that document's exact
// vector, the Query* constants to fixed vectors, and any other text to a
// positive vector derived from an FNV hash of the text (equal texts, equal
// vectors; so a document added by index/add is found by its own text).
func Embedder() adapters.Embedder {
	e := &fakeEmbedder{byText: map[string][]float32{}}
	for _, d := range Corpus() {
		e.byText["vec:"+d.ID] = d.Vector
		e.byText[d.Unique] = d.Vector
	}
	for k, v := range namedVectors {
		e.byText[k] = v
	}
	return e
}

// Embed returns one vector per text; it honours ctx.
func (e *fakeEmbedder) Embed(ctx context.Context, texts []string, _ string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if strings.HasPrefix(t, BlockPrefix) {
			return nil, block(ctx)
		}
		out[i] = e.vector(t)
	}
	return out, nil
}

// BlockPrefix makes the fake embedder block until its ctx is done, so
// cancellation and deadlines can be observed end to end.
const BlockPrefix = "block:"

// maxBlock bounds a block: query whose ctx never ends.
const maxBlock = 10 * time.Second

func block(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(maxBlock):
		return errors.New("adaptertest: fake embedder: block: query was never cancelled")
	}
}

func (e *fakeEmbedder) vector(text string) []float32 {
	if v, ok := e.byText[strings.TrimSpace(text)]; ok {
		return append([]float32(nil), v...)
	}
	return hashVector(text)
}

// hashVector derives 8 components in [0.05, 1.05) from FNV-1a of text.
func hashVector(text string) []float32 {
	v := make([]float32, 8)
	for i := range v {
		h := fnv.New64a()
		h.Write([]byte{byte(i)})
		h.Write([]byte(text))
		v[i] = 0.05 + float32(h.Sum64()%1000)/1000
	}
	return v
}

// Dimension is 8.
func (e *fakeEmbedder) Dimension() int { return 8 }

// Identity is FakeIdentity.
func (e *fakeEmbedder) Identity() string { return FakeIdentity }

// Int8Embedder returns the FAKE embedder of Embedder with every vector
// multiplied by 10 and rounded to an integer in [-128, 127] (Int8Schema's
// corpus vectors for "vec:<id>" and Unique terms), reporting element
// type int8: the embedder of a byte vector field.
func Int8Embedder() adapters.Embedder { return int8Embedder{Embedder().(*fakeEmbedder)} }

type int8Embedder struct{ *fakeEmbedder }

var _ adapters.Elementer = int8Embedder{}

// Embed returns the fake embedder's vectors as int8 integers.
func (e int8Embedder) Embed(ctx context.Context, texts []string, kind string) ([][]float32, error) {
	vs, err := e.fakeEmbedder.Embed(ctx, texts, kind)
	for i := range vs {
		vs[i] = int8Vector(vs[i])
	}
	return vs, err
}

// Element is int8.
func (int8Embedder) Element() capability.Element { return capability.ElementInt8 }
