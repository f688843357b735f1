package mcpserver

import (
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
