package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
	"github.com/rcp-sidecar/rcp-sidecar/reranker/rerankertest"
)

// TestProbeNativeRerankOpenSearch runs `probe` on an opensearch backend
// naming rerank_model. The searches go to the real OpenSearch node; the
// model API is the FAKE ml-commons (rerankertest.MLServer), as no
// ml-commons plugin can run here. A reranker section wins over the
// engine's model; without the fake in front, the real node (no
// ml-commons) fails the model's start-up check, which probe explains when
// no section is configured.
func TestProbeNativeRerankOpenSearch(t *testing.T) {
	base := itest.RequireEnv(t, "RCP_OS_URL", "run integration/opensearch/start.sh and source integration/.work/opensearch.env")
	index := uniqueName("rcp-native-rerank")
	if code, body := engineDo(t, base, http.MethodPut, "/"+index,
		`{"settings":{"number_of_shards":1,"number_of_replicas":0},"mappings":{"properties":{"text":{"type":"text"}}}}`); code != http.StatusOK {
		t.Fatalf("create index: %d %s", code, body)
	}
	t.Cleanup(func() { engineDo(t, base, http.MethodDelete, "/"+index, "") })
	ml := rerankertest.NewMLServer(t, "m1", base)
	sidecar := overlapReranker(t, false)
	config := func(url, reranker string) string {
		cfg := filepath.Join(t.TempDir(), "c.yaml")
		writeFile(t, cfg, "backends:\n  - {name: os, engine: opensearch, settings: {urls: [\""+url+"\"], index: "+index+
			", rerank_model: m1, rerank_max_candidates: 40}}\n"+reranker)
		return cfg
	}
	withSection := "reranker: {url: \"" + sidecar + "\", model: overlap-test, max_candidates: 20, retries: 0}\n"
	for _, tc := range []struct {
		name, url, section string
		model, why         string
		maxCandidates      int
	}{
		{"native model", ml.URL, "", "m1", "engine-native cross-encoder reranker, OpenSearch ml-commons model m1, at most 40 candidates", 40},
		{"the reranker section wins over the native model", ml.URL, withSection, "overlap-test", "sidecar cross-encoder reranker overlap-test", 20},
		{"no ml-commons: the reranker section serves", base, withSection, "overlap-test", "sidecar cross-encoder reranker overlap-test", 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := probeJSON(t, "--config", config(tc.url, tc.section))
			var rc struct {
				Models        []string
				MaxCandidates int
			}
			if err := json.Unmarshal(r.Capabilities["rerank"], &rc); err != nil || len(rc.Models) != 1 || rc.Models[0] != tc.model || rc.MaxCandidates != tc.maxCandidates {
				t.Fatalf("rerank capability %s (%v), want model %s, %d candidates", r.Capabilities["rerank"], err, tc.model, tc.maxCandidates)
			}
			for _, rs := range r.Reasons {
				if rs.Capability == "rerank" && (!rs.Advertised || !strings.Contains(rs.Why, tc.why)) {
					t.Errorf("probe explains rerank as %q, want %q", rs.Why, tc.why)
				}
			}
		})
	}
	// Neither works: nothing is advertised and probe says why.
	r, _ := probeJSON(t, "--config", config(base, ""))
	if _, ok := r.Capabilities["rerank"]; ok {
		t.Error("rerank advertised with a failing native model and no reranker section")
	}
	for _, rs := range r.Reasons {
		if rs.Capability == "rerank" && !strings.Contains(rs.Why, "the engine's OpenSearch ml-commons model m1 is not usable: rerank model m1: the engine has no ml-commons plugin") {
			t.Errorf("probe explains rerank as %q", rs.Why)
		}
	}
}
