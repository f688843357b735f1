package opensearch

import (
	"context"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// TestLiveHealth: the adapter reports the health of its own index on the
// real engine — green while another index of the cluster is red, yellow
// for a replica one node cannot hold, red for an index whose only shard
// may live on no existing node — and a missing index as red within the
// check's short server-side timeout.
func TestLiveHealth(t *testing.T) {
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	index := func(settings map[string]any) string {
		name := "rcp-health-" + randHex(5)
		if err := createIndex(ctx, base, name, map[string]any{"settings": map[string]any{"index": settings}}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteIndex(base, name) })
		return name
	}
	red := index(map[string]any{"number_of_shards": 1, "number_of_replicas": 0, "routing.allocation.require._name": "no-such-node"})
	yellow := index(map[string]any{"number_of_shards": 1, "number_of_replicas": 1})
	green := index(map[string]any{"number_of_shards": 1, "number_of_replicas": 0})
	for _, tc := range []struct {
		index string
		want  adapters.HealthStatus
	}{
		{green, adapters.HealthGreen},
		{yellow, adapters.HealthYellow},
		{red, adapters.HealthRed},
		{"rcp-health-missing-" + randHex(5), adapters.HealthRed},
	} {
		a := openWritable(ctx, t, base, tc.index, nil)
		var h adapters.Health
		var err error
		start := time.Now()
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			// a new index is red until its primary starts
			if h, err = a.(adapters.HealthChecker).Health(ctx); err == nil && h.Status == tc.want {
				break
			}
		}
		if err != nil || h.Status != tc.want || h.State != string(tc.want) || h.Of != "index" {
			t.Errorf("%s: health %+v, %v; want %s", tc.index, h, err, tc.want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: health took %v", tc.index, d)
		}
	}
}
