package opensearch

import (
	"context"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/conformance/livetest"
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

// TestLiveFilterClasses: one regression per class of wrong filter results
// found on everyday mappings (livetest.FilterClasses). OpenSearch does not
// record values dropped by ignore_above, so exists is not offered there.
func TestLiveFilterClasses(t *testing.T) {
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := "rcp-live-" + randHex(5)
	if err := createIndex(ctx, base, name, livetest.ClassesIndex); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteIndex(base, name) })
	livetest.FilterClasses(ctx, t, openWritable(ctx, t, base, name, nil), false)
}
