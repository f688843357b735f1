package elasticsearch

// Probe decoding against recorded responses of a real node
// (testdata/probe, captured by integration/elasticsearch/capture-probe.sh)
// served by a fake HTTP server.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

const fixtureVersion = "8.19.21"

// fakeRecorded serves recorded probe responses of fixtureVersion; route
// maps a request path to a fixture name.
func fakeRecorded(t testing.TB, route map[string]string) *httptest.Server {
	t.Helper()
	return fakeRecordedVersion(t, fixtureVersion, route)
}

// fakeRecordedVersion serves the probe responses recorded from version.
func fakeRecordedVersion(t testing.TB, version string, route map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := route[r.URL.Path]
		if !ok {
			http.Error(w, `{"error":{"type":"fake_unrouted","reason":"`+r.URL.Path+`"},"status":500}`, 500)
			return
		}
		base := filepath.Join("testdata", "probe", "es-"+version+"-"+name+".json")
		body, err := os.ReadFile(base)
		meta, err2 := os.ReadFile(base + ".meta")
		if err != nil || err2 != nil {
			t.Errorf("fixture %s: %v %v", name, err, err2)
			return
		}
		lines := strings.Split(strings.TrimSpace(string(meta)), "\n")
		status, _ := strconv.Atoi(lines[0])
		if len(lines) > 1 && lines[1] != "" {
			w.Header().Set("X-Elastic-Product", lines[1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

var aliasRoutes = map[string]string{
	"/":                         "root",
	"/_license":                 "license",
	"/_inference/rerank/_all":   "inference-rerank",
	"/_nodes/plugins":           "nodes-plugins",
	"/probe-fixture/_mapping":   "mapping-alias",
	"/probe-fixture/_count":     "count-alias",
	"/probe-fixture-a/_mapping": "mapping-index",
	"/no-such-index/_mapping":   "mapping-missing",
	"/probe-fixture-a/_count":   "count-alias",
	"/probe-fixture/_settings/index.number_of_replicas":   "settings-alias",
	"/probe-fixture-a/_settings/index.number_of_replicas": "settings-index",
}

// probedFake opens an adapter on the fake and probes it.
func probedFake(t testing.TB, cfg *Config) *adapter {
	t.Helper()
	srv := fakeRecorded(t, aliasRoutes)
	cfg.URLs = []string{srv.URL}
	a, err := open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Probe(context.Background()); err != nil {
		t.Fatalf("probe: %v", err)
	}
	return a.(*adapter)
}

func fixtureConfig(index string) *Config {
	c := DefaultConfig()
	c.Index, c.PIT = index, true
	return c
}
