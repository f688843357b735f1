package opensearch

import (
	"context"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/livetest"
)

// TestLiveDateNanosFilter: date filters compare at a date_nanos field's
// own precision.
func TestLiveDateNanosFilter(t *testing.T) {
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := newLiveIndex(ctx, t, base, livetest.DateNanosMapping)
	livetest.DateNanosFilter(ctx, t, openWritable(ctx, t, base, name, nil))
}
