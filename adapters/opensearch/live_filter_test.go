package opensearch

import (
	"context"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/livetest"
)

// TestLiveDateFilters: date filters select what §8 selects on date and
// date_nanos fields alike.
func TestLiveDateFilters(t *testing.T) {
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := newLiveIndex(ctx, t, base, livetest.DateMapping)
	livetest.DateFilters(ctx, t, openWritable(ctx, t, base, name, nil))
}
