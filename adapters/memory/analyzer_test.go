package memory

import (
	"context"
	"slices"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

func analyzerDocs() []adapters.Document {
	return []adapters.Document{
		{ID: "comet", Text: "A comet grows two tails near the Sun."},
		{ID: "runner", Text: "The runners were running in the park."},
		{ID: "other", Text: "Tides follow the Moon."},
	}
}

// TestStandardAnalyzerIsTheDefault: without an analyzer nothing is
// stemmed and nothing removed, as before the analyzer existed: "comets"
// does not find "comet", and a stop word still matches.
func TestStandardAnalyzerIsTheDefault(t *testing.T) {
	s := New(Options{})
	s.Add(analyzerDocs()...)
	if got := ids(search(t, s, lexical("comets"))); len(got) != 0 {
		t.Errorf("standard analyzer: comets found %v", got)
	}
	if got := ids(search(t, s, lexical("comet"))); !slices.Equal(got, []string{"comet"}) {
		t.Errorf("standard analyzer: comet found %v", got)
	}
	if got := ids(search(t, s, lexical("the"))); len(got) != 3 {
		t.Errorf("standard analyzer: the found %v, want every document", got)
	}
}

// TestEnglishAnalyzer: Porter2 stemming on both sides, stop words only
// when asked for.
func TestEnglishAnalyzer(t *testing.T) {
	s := New(Options{Analyzer: AnalyzerEnglish})
	s.Add(analyzerDocs()...)
	for q, want := range map[string][]string{
		"comets": {"comet"}, "Comet": {"comet"}, "tail": {"comet"},
		"run": {"runner"}, "runs": {"runner"}, "parks": {"runner"},
	} {
		if got := ids(search(t, s, lexical(q))); !slices.Equal(got, want) {
			t.Errorf("english: %q found %v, want %v", q, got, want)
		}
	}
	if got := ids(search(t, s, lexical("the"))); len(got) != 3 {
		t.Errorf("english without stop words: the found %v, want every document", got)
	}

	s = New(Options{Analyzer: AnalyzerEnglish, StopWords: true})
	s.Add(analyzerDocs()...)
	if got := ids(search(t, s, lexical("the"))); len(got) != 0 {
		t.Errorf("english with stop words: the found %v", got)
	}
	if got := ids(search(t, s, lexical("the comets"))); !slices.Equal(got, []string{"comet"}) {
		t.Errorf("english with stop words: the comets found %v", got)
	}
}

func TestAnalyzerTerms(t *testing.T) {
	for _, tc := range []struct {
		a    analyzer
		in   string
		want []string
	}{
		{analyzer{}, "The Comets", []string{"the", "comets"}},
		{analyzer{}, "The Comet's tails", []string{"the", "comet", "s", "tails"}},
		{newAnalyzer(AnalyzerEnglish, false), "The Comet's tails", []string{"the", "comet", "tail"}},
		{newAnalyzer(AnalyzerEnglish, false), "Halley’S comet; it's o'sullivan's", []string{"halley", "comet", "it", "o", "sullivan"}},
		{newAnalyzer(AnalyzerEnglish, true), "The Comet's tails", []string{"comet", "tail"}},
		{newAnalyzer(AnalyzerEnglish, false), "running generously", []string{"run", "generous"}},
		{newAnalyzer(AnalyzerStandard, true), "The Comets", []string{"the", "comets"}},
	} {
		if got := tc.a.terms(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%+v.terms(%q) = %q, want %q", tc.a, tc.in, got, tc.want)
		}
	}
}

// TestFactoryAnalyzer: the backend settings select the analyzer; bad
// combinations are rejected.
func TestFactoryAnalyzer(t *testing.T) {
	for _, c := range []Config{{Analyzer: "klingon"}, {StopWords: true}, {Analyzer: "standard", StopWords: true}} {
		if c.Validate() == nil {
			t.Errorf("%+v validated", c)
		}
	}
	cfg := Factory.NewConfig().(*Config)
	if cfg.Analyzer != string(AnalyzerStandard) || cfg.StopWords {
		t.Errorf("default analyzer %q stop words %v", cfg.Analyzer, cfg.StopWords)
	}
	cfg.Analyzer, cfg.StopWords = "english", true
	a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	s := a.(*Store)
	s.Add(analyzerDocs()...)
	if got := ids(search(t, s, lexical("comets"))); !slices.Equal(got, []string{"comet"}) {
		t.Errorf("factory english: comets found %v", got)
	}
}
