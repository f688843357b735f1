package eshttp

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/internal/nettest"
)

// TestDialsBounded: 400 requests, each cancelled after 20ms, against a
// node that accepts nothing leave at most MaxConnsPerHost dials behind
// them, not one each (which is what the transport does without the
// bound: a dial outlives its cancelled request until the dial timeout).
func TestDialsBounded(t *testing.T) {
	addr := nettest.StuckListener(t)
	tr := Transport(30*time.Second, true, nil)
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	left := nettest.Abandon(400, func(ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			t.Error("a node that accepts nothing answered")
		}
	})
	t.Logf("%d goroutines left behind by 400 cancelled requests (bound %d dials)", left, MaxConnsPerHost)
	if left > MaxConnsPerHost+8 {
		t.Errorf("%d goroutines left behind, want ≤ MaxConnsPerHost %d + 8", left, MaxConnsPerHost)
	}
}
