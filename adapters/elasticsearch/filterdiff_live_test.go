package elasticsearch

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/filterdifftest"
)

// TestLiveFilterDifferential: on generated mappings and documents, every
// (field, operator) the sidecar advertises selects what §8 says, and every
// other leaf is refused with the right error (filterdifftest).
func TestLiveFilterDifferential(t *testing.T) {
	base := liveURL(t)
	filterdifftest.Run(t, filterdifftest.Target{
		Engine: "elasticsearch", URL: base, Package: "./adapters/elasticsearch/",
		// The integ-test distribution the live tests run has neither the
		// mapper-extras module (scaled_float, match_only_text) nor the
		// wildcard, constant_keyword and unsigned_long plugins, which reject
		// the mapping there; flattened and runtime fields are built in.
		Features: esFeatures(t, base),
		CreateIndex: func(ctx context.Context, name string, body map[string]any) error {
			return createIndex(ctx, base, name, body)
		},
		DeleteIndex: func(name string) { _, _, _ = esDo(context.Background(), base, http.MethodDelete, "/"+name, nil) },
		Open: func(ctx context.Context, index, bm25 string) (adapters.Adapter, error) {
			cfg := DefaultConfig()
			cfg.URLs, cfg.Index = []string{base}, index
			cfg.TextFields, cfg.ContentField, cfg.MetaFields = []FieldConfig{{Name: bm25}}, bm25, []string{bm25}
			return open(ctx, cfg, adapters.Deps{})
		},
	})
}

// esFeatures are the filterdifftest features of the node at base. Elasticsearch
// 9.2.0 mis-indexes a document whose epoch_second date is a JSON number
// with a fraction (the number also lands in the next numeric field), so
// there such dates are written as strings.
func esFeatures(t *testing.T, base string) filterdifftest.Feature {
	t.Helper()
	feats := filterdifftest.FeatureFlattened | filterdifftest.FeatureRuntime
	_, body, err := esDo(context.Background(), base, http.MethodGet, "/_nodes/_local?filter_path=nodes.*.version", nil)
	if err != nil {
		t.Fatal(err)
	}
	var ni struct {
		Nodes map[string]struct{ Version string } `json:"nodes"`
	}
	if err := json.Unmarshal(body, &ni); err != nil {
		t.Fatal(err)
	}
	for _, n := range ni.Nodes {
		if !strings.HasPrefix(n.Version, "9.2.0") {
			feats |= filterdifftest.FeatureEpochFractionNumbers
		}
		if atLeast(n.Version, [2]int{8, 0}) { // 7.17 refuses epoch millis before 1970
			feats |= filterdifftest.FeatureNegativeEpochMillis
		}
	}
	return feats
}
