package mcpserver

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestHitTextReadsRawMetaTitle: a hit without a citation title is
// labelled with meta.title whether the adapter handed it on decoded or as
// the engine's JSON text (rcp.RawJSON), and a title that is not a string
// labels nothing.
func TestHitTextReadsRawMetaTitle(t *testing.T) {
	for _, tc := range []struct {
		title any
		want  string
	}{
		{"Caf\u00e9 <1>", "[1] Caf\u00e9 <1> (id a"},
		{rcp.RawJSON(`"Caf\u00e9 \u003c1>"`), "[1] Caf\u00e9 <1> (id a"},
		{rcp.RawJSON(`{"x":1}`), "[1] (id a"},
		{rcp.RawJSON(`not json`), "[1] (id a"},
	} {
		got := hitText(1, &rcp.Hit{ID: "a", Score: 1, Meta: map[string]any{"title": tc.title}}, "")
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("title %v: %q, want it to start %q", tc.title, got, tc.want)
		}
	}
}

// TestOneLineMatchesFields checks oneLine's shortcut against folding every
// string with strings.Fields on generated titles.
func TestOneLineMatchesFields(t *testing.T) {
	pieces := []string{"a", "title", " ", "  ", "\t", "\n", "\v", "\f", "\r", "é", "\u00a0", "\u0085", "\u2003", "x", "\x1f", "\xff"}
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 20000 {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		want := strings.Join(strings.Fields(s), " ")
		if len(want) > 12 {
			cut := 12
			for cut > 0 && !utf8Start(want[cut]) {
				cut--
			}
			want = want[:cut] + "…"
		}
		if got := oneLine(s, 12); got != want {
			t.Fatalf("string %d (seed 3,5): oneLine(%q) = %q, want %q", i, s, got, want)
		}
	}
}
