package beir

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
)

// Generated returns a deterministic synthetic corpus of n documents and q
// queries for the fidelity check when SciFact is not available. Titles
// (3–8 words) and texts (30–150 words) draw from a Zipf-distributed
// vocabulary of made-up lower-case words, so term frequencies, document
// frequencies and lengths vary as in real text and BM25 ranks with few
// ties; each query is 2–4 words of one document's text, so every query
// has matches. It has no relevance judgements (Qrels is empty): it shows
// that the sidecar returns what the engine returns, not how good the
// ranking is. The same seed gives the same dataset on every machine.
func Generated(seed int64, n, q int) *Dataset {
	rng := rand.New(rand.NewSource(seed))
	vocab := makeVocab(rng, 4000)
	zipf := rand.NewZipf(rng, 1.07, 2, uint64(len(vocab)-1))
	words := func(k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = vocab[zipf.Uint64()]
		}
		return out
	}
	ds := &Dataset{Qrels: map[string]map[string]int{}}
	texts := make([][]string, n)
	for i := range n {
		texts[i] = words(30 + rng.Intn(121))
		ds.Docs = append(ds.Docs, Doc{ID: fmt.Sprintf("g%05d", i), Title: strings.Join(words(3+rng.Intn(6)), " "),
			Text: strings.Join(texts[i], " ")})
	}
	for i := range q {
		text := texts[rng.Intn(n)]
		qw := make([]string, 2+rng.Intn(3))
		for j := range qw {
			qw[j] = text[rng.Intn(len(text))]
		}
		ds.Queries = append(ds.Queries, Query{ID: fmt.Sprintf("q%03d", i), Text: strings.Join(qw, " ")})
	}
	return ds
}

// makeVocab returns n distinct made-up words of two to four syllables.
func makeVocab(rng *rand.Rand, n int) []string {
	onsets := []string{"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "kl", "st", "tr"}
	vowels := []string{"a", "e", "i", "o", "u", "ai", "ou"}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for range 2 + rng.Intn(3) {
			b.WriteString(onsets[rng.Intn(len(onsets))])
			b.WriteString(vowels[rng.Intn(len(vowels))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// The generated fallback of FidelityData: sized so loading it takes
// seconds and 30 queries of k=100 each see a full, varied ranking.
const (
	generatedSeed = 1
	generatedDocs = 2000
	// GeneratedQueries is how many queries the generated fallback has.
	GeneratedQueries = 300
)

// Source says which dataset FidelityData returned.
type Source struct {
	// Name is "scifact" or "generated"; it suits index names.
	Name string
	// About says where the data came from or, for the generated
	// fallback, why SciFact was not used.
	About string
}

// Judged reports whether the dataset has relevance judgements (SciFact),
// so nDCG can be computed on it.
func (s Source) Judged() bool { return s.Name == "scifact" }

// FidelityData is the dataset of a sidecar-versus-engine fidelity check:
// SciFact's test split when Locate finds it, else the generated corpus
// (Generated), on which ids and order are compared just the same but
// nDCG cannot be. An error that is not ErrNotAvailable (RCP_SCIFACT_DIR
// pointing at no dataset, an unreadable copy) is returned, not papered
// over.
func FidelityData(ctx context.Context) (*Dataset, Source, error) {
	loc, err := Locate(ctx)
	switch {
	case errors.Is(err, ErrNotAvailable):
		return Generated(generatedSeed, generatedDocs, GeneratedQueries), Source{Name: "generated",
			About: fmt.Sprintf("generated corpus (%d documents, seed %d) because %v", generatedDocs, generatedSeed, err)}, nil
	case err != nil:
		return nil, Source{}, err
	}
	ds, err := Load(loc.Dir)
	if err != nil {
		return nil, Source{}, err
	}
	return ds, Source{Name: "scifact", About: "SciFact from " + loc.From}, nil
}
