package elasticsearch

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/livetest"
)

// TestLiveDateFilters: date filters select what §8 selects on date and
// date_nanos fields alike.
func TestLiveDateFilters(t *testing.T) {
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := uniqueName("rcp-dates")
	if err := createIndex(ctx, base, name, map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"mappings": livetest.DateMapping}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _, _ = esDo(context.Background(), base, http.MethodDelete, "/"+name, nil) })
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.Writable, cfg.Refresh = []string{base}, name, true, "true"
	a, err := open(ctx, cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	livetest.DateFilters(ctx, t, a)
}

// TestLiveFilterClasses: one regression per class of wrong filter results
// found on everyday mappings (livetest.FilterClasses).
func TestLiveFilterClasses(t *testing.T) {
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := uniqueName("rcp-classes")
	if err := createIndex(ctx, base, name, livetest.ClassesIndex); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _, _ = esDo(context.Background(), base, http.MethodDelete, "/"+name, nil) })
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.Writable, cfg.Refresh = []string{base}, name, true, "true"
	a, err := open(ctx, cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	livetest.FilterClasses(ctx, t, a, true)
}
