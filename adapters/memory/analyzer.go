package memory

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// Analyzer names how the memory engine turns title and text, and query
// text, into index terms.
type Analyzer string

const (
	// AnalyzerStandard is the default: tokenize's Unicode letter/digit
	// split with lower-casing, nothing removed, nothing stemmed.
	AnalyzerStandard Analyzer = "standard"
	// AnalyzerEnglish drops possessive 's, then stems each standard token
	// with the Snowball English (Porter2) stemmer, so "comets" and "comet"
	// are one term; with Options.StopWords it also drops englishStopWords.
	AnalyzerEnglish Analyzer = "english"
)

// parseAnalyzer accepts "" (standard), "standard" or "english".
func parseAnalyzer(s string) (Analyzer, error) {
	switch a := Analyzer(s); a {
	case "", AnalyzerStandard:
		return AnalyzerStandard, nil
	case AnalyzerEnglish:
		return a, nil
	}
	return "", fmt.Errorf("analyzer %q must be standard or english", s)
}

// analyzer applies the configured analysis after tokenize. The zero value
// is the standard analyzer.
type analyzer struct{ stem, stop bool }

func newAnalyzer(a Analyzer, stopWords bool) analyzer {
	en := a == AnalyzerEnglish
	return analyzer{stem: en, stop: en && stopWords}
}

// terms returns the index terms of s in order.
func (a analyzer) terms(s string) []string {
	if !a.stem && !a.stop {
		return tokenize(s)
	}
	toks := tokenize(stripPossessives(s))
	out := toks[:0]
	var env *snowballstem.Env
	for _, t := range toks {
		if a.stop && englishStopWords[t] {
			continue
		}
		if a.stem {
			if env == nil {
				env = snowballstem.NewEnv(t)
			} else {
				env.SetCurrent(t)
			}
			english.Stem(env)
			t = env.Current()
		}
		out = append(out, t)
	}
	return out
}

// stripPossessives removes a possessive 's (or ’s) at the end of a word,
// as Elasticsearch's english_possessive_stemmer does, so "comet's" is
// "comet" and not "comet" plus a stray "s" term.
func stripPossessives(s string) string {
	if !strings.Contains(s, "'") && !strings.Contains(s, "’") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == '\'' || r == '’') && i+n < len(s) && (s[i+n] == 's' || s[i+n] == 'S') && wordEnd(s[i+n+1:]) {
			i += n + 1
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

// wordEnd reports whether rest starts with something other than a letter
// or digit (or is empty).
func wordEnd(rest string) bool {
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

// englishStopWords is Lucene's English stop set, the one Elasticsearch's
// and OpenSearch's english analyzer and _english_ stop filter use, so the
// memory engine drops the same words as those engines.
var englishStopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true,
	"but": true, "by": true, "for": true, "if": true, "in": true, "into": true, "is": true,
	"it": true, "no": true, "not": true, "of": true, "on": true, "or": true, "such": true,
	"that": true, "the": true, "their": true, "then": true, "there": true, "these": true,
	"they": true, "this": true, "to": true, "was": true, "will": true, "with": true,
}
