package memory

import (
	"math"
	"slices"
	"unicode"
	"unicode/utf8"
)

// tokenize lower-cases s and splits it on anything that is not a letter, a
// digit or a combining mark (Unicode-aware, §4.6: never assume ASCII). Han,
// Hiragana, Katakana and Hangul characters are single-character tokens, a
// simple unigram segmentation for scripts without spaces.
func tokenize(s string) []string {
	var toks []string
	var buf [64]byte
	cur := buf[:0]
	flush := func() {
		if len(cur) > 0 {
			toks = append(toks, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf: // ASCII fast path, same classes as below
			switch c := byte(r); {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				cur = append(cur, c)
			case 'A' <= c && c <= 'Z':
				cur = append(cur, c+'a'-'A')
			default:
				flush()
			}
		case r >= 0x1100 && isCJK(r): // no CJK script starts below U+1100
			flush()
			toks = append(toks, string(unicode.ToLower(r)))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			cur = utf8.AppendRune(cur, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return toks
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// termFreqs counts the terms of s under a.
func termFreqs(a analyzer, s string) (map[string]int, int) {
	toks := a.terms(s)
	tf := make(map[string]int, len(toks))
	for _, t := range toks {
		tf[t]++
	}
	return tf, len(toks)
}

// uniqueTerms returns the distinct terms of a query under a in first-seen
// order; each query term contributes once.
func uniqueTerms(a analyzer, q string) []string {
	toks := a.terms(q)
	if len(toks) > 32 {
		seen := make(map[string]bool, len(toks))
		return slices.DeleteFunc(toks, func(t string) bool { dup := seen[t]; seen[t] = true; return dup })
	}
	out := toks[:0]
	for _, t := range toks {
		if !slices.Contains(out, t) { // short queries: a scan beats a set
			out = append(out, t)
		}
	}
	return out
}

// posting is one document holding a term in one field: its slot in
// Store.slots, the term's frequency and the field's length in that document,
// so scoring touches no per-document map.
type posting struct {
	slot   int32
	tf, dl int32
}

// fieldIndex is the inverted index and length statistics of one text field.
type fieldIndex struct {
	postings map[string][]posting // term → documents holding it, in no set order
	totalLen int
}

func newFieldIndex() *fieldIndex { return &fieldIndex{postings: map[string][]posting{}} }

func (f *fieldIndex) add(slot int32, tf map[string]int, n int) {
	for t, c := range tf {
		f.postings[t] = append(f.postings[t], posting{slot: slot, tf: int32(c), dl: int32(n)})
	}
	f.totalLen += n
}

func (f *fieldIndex) remove(slot int32, tf map[string]int, n int) {
	for t := range tf {
		ps := f.postings[t]
		if i := slices.IndexFunc(ps, func(p posting) bool { return p.slot == slot }); i >= 0 {
			ps[i] = ps[len(ps)-1]
			ps = ps[:len(ps)-1]
		}
		if len(ps) == 0 {
			delete(f.postings, t)
			continue
		}
		f.postings[t] = ps
	}
	f.totalLen -= n
}

// bm25 holds the Okapi BM25 parameters.
type bm25 struct{ k1, b float64 }

// idf is the Lucene form ln(1 + (N - df + 0.5)/(df + 0.5)), which is never
// negative, so BM25 scores have the floor 0.
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// term is one term's contribution:
// idf · tf·(k1+1) / (tf + k1·(1 - b + b·dl/avgdl)).
func (p bm25) term(idf float64, tf, dl int32, avgdl float64) float64 {
	norm := 1.0
	if avgdl > 0 {
		norm = 1 - p.b + p.b*float64(dl)/avgdl
	}
	t := float64(tf)
	return idf * t * (p.k1 + 1) / (t + p.k1*norm)
}
