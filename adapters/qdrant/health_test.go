package qdrant

import (
	"testing"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// TestCollectionHealth: Qdrant's four collection states on the common
// scale, the engine's word kept; an unknown state is an error (the check
// then counts as unknown, never as green).
func TestCollectionHealth(t *testing.T) {
	for _, tc := range []struct {
		in    qdrantgo.CollectionStatus
		want  adapters.HealthStatus
		state string
	}{
		{qdrantgo.CollectionStatus_Green, adapters.HealthGreen, "green"},
		{qdrantgo.CollectionStatus_Yellow, adapters.HealthYellow, "yellow"},
		{qdrantgo.CollectionStatus_Grey, adapters.HealthYellow, "grey"},
		{qdrantgo.CollectionStatus_Red, adapters.HealthRed, "red"},
	} {
		h, err := collectionHealth(tc.in)
		if err != nil || h.Status != tc.want || h.State != tc.state || h.Of != "collection" {
			t.Errorf("%v: %+v, %v; want %s (%s)", tc.in, h, err, tc.want, tc.state)
		}
	}
	if h, err := collectionHealth(qdrantgo.CollectionStatus_UnknownCollectionStatus); err == nil {
		t.Errorf("unknown status: %+v, want an error", h)
	}
}
