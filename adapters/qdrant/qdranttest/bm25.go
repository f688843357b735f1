package qdranttest

import (
	"hash/fnv"
	"strings"
	"unicode"
)

// BM25 document-side constants of the FAKE model (Qdrant's defaults).
const (
	bm25K1     = 1.2
	bm25B      = 0.75
	bm25AvgLen = 256.0
)

// tokens lower-cases and splits on anything that is not a letter or digit.
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func tokenID(t string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(t))
	return h.Sum32()
}

// bm25Document is the document-side BM25 weight per token:
// tf·(k1+1) / (tf + k1·(1 − b + b·len/avg_len)).
func bm25Document(text string) map[uint32]float32 {
	toks := tokens(text)
	tf := map[uint32]float64{}
	for _, t := range toks {
		tf[tokenID(t)]++
	}
	norm := bm25K1 * (1 - bm25B + bm25B*float64(len(toks))/bm25AvgLen)
	out := make(map[uint32]float32, len(tf))
	for id, f := range tf {
		out[id] = float32(f * (bm25K1 + 1) / (f + norm))
	}
	return out
}

// bm25Query weighs each distinct query token 1 (IDF is applied by the
// sparse vector's IDF modifier at search time).
func bm25Query(text string) map[uint32]float32 {
	out := map[uint32]float32{}
	for _, t := range tokens(text) {
		out[tokenID(t)] = 1
	}
	return out
}
