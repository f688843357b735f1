package embedding

import (
	"context"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/nettest"
)

// TestDialsBounded: 400 queries, each given up after 20ms (the request
// failed elsewhere), against an embedding server that accepts nothing
// leave at most MaxConnsPerHost dials behind, not one each.
func TestDialsBounded(t *testing.T) {
	addr := nettest.StuckListener(t)
	o, err := NewOpenAI(OpenAIOptions{BaseURL: "http://" + addr, Model: "m", Dimension: 4})
	if err != nil {
		t.Fatal(err)
	}
	left := nettest.Abandon(400, func(ctx context.Context) {
		if _, err := o.Embed(ctx, []string{"q"}, "query"); err == nil {
			t.Error("a server that accepts nothing answered")
		}
	})
	t.Logf("%d goroutines left behind by 400 abandoned queries (bound %d dials)", left, MaxConnsPerHost)
	if left > MaxConnsPerHost+8 {
		t.Errorf("%d goroutines left behind, want ≤ MaxConnsPerHost %d + 8", left, MaxConnsPerHost)
	}
}
