package elasticsearch

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
	name := newLiveIndex(ctx, t, base, "rcp-dates", map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0}, "mappings": livetest.DateMapping})
	livetest.DateFilters(ctx, t, openWritable(ctx, t, base, name, func(c *Config) { c.Refresh = "true" }))
}

// TestLiveFilterClasses: one regression per class of wrong filter results
// found on everyday mappings (livetest.FilterClasses).
func TestLiveFilterClasses(t *testing.T) {
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := newLiveIndex(ctx, t, base, "rcp-classes", livetest.ClassesIndex)
	livetest.FilterClasses(ctx, t, openWritable(ctx, t, base, name, func(c *Config) { c.Refresh = "true" }), true)
}
