package capability_test

import (
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestConformance checks each §14 condition on hand-built capability sets
// (the oracle is the §14.1–14.3 text, not the derivation).
func TestConformance(t *testing.T) {
	on := &struct{}{}
	retrieve := func(modes ...rcp.Mode) *rcp.RetrieveCap { return &rcp.RetrieveCap{Modes: modes} }
	filter := &rcp.FilterCap{Fields: map[string]string{"t": "keyword"}}
	tests := []struct {
		name string
		caps rcp.Capabilities
		want string
	}{
		{"embed only", rcp.Capabilities{Embed: &rcp.EmbedCap{Dimension: 3}}, "L0"},
		{"retrieve without filter", rcp.Capabilities{Retrieve: retrieve(rcp.ModeSparse), Citations: on}, "L0"},
		{"retrieve without citations", rcp.Capabilities{Retrieve: retrieve(rcp.ModeSparse), Filter: filter}, "L0"},
		{"retrieve with no mode", rcp.Capabilities{Retrieve: retrieve(), Filter: filter, Citations: on}, "L0"},
		{"L1 sparse only", rcp.Capabilities{Retrieve: retrieve(rcp.ModeSparse), Filter: filter, Citations: on}, "L1"},
		{"L1 plus one SOTA key", rcp.Capabilities{Retrieve: retrieve(rcp.ModeSparse), Filter: filter, Citations: on, Log: &rcp.LogCap{}}, "L1"},
		{"L1 plus streaming and pagination", rcp.Capabilities{Retrieve: retrieve(rcp.ModeSparse), Filter: filter, Citations: on,
			Streaming: on, Pagination: on}, "L2"},
		{"L1 plus rerank and determinism", rcp.Capabilities{Retrieve: &rcp.RetrieveCap{Modes: []rcp.Mode{rcp.ModeHybrid}, Deterministic: true},
			Filter: filter, Citations: on, Rerank: &rcp.RerankCap{Methods: []string{"cross-encoder"}}}, "L2"},
		{"SOTA keys without L1", rcp.Capabilities{Retrieve: retrieve(rcp.ModeSparse), Streaming: on, Pagination: on, Log: &rcp.LogCap{}}, "L0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := capability.Conformance(tc.caps); got != tc.want {
				t.Errorf("Conformance = %s, want %s", got, tc.want)
			}
		})
	}
}
