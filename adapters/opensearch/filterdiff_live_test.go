package opensearch

import (
	"context"
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
		Engine: "opensearch", URL: base, Package: "./adapters/opensearch/",
		// OpenSearch 3.x ships mapper-extras, wildcard, constant_keyword,
		// unsigned_long, flat_object and derived fields; it has neither
		// flattened nor a runtime mapping section.
		Features: filterdifftest.FeatureMapperExtras | filterdifftest.FeatureWildcard | filterdifftest.FeatureConstantKeyword |
			filterdifftest.FeatureUnsignedLong | filterdifftest.FeatureFlatObject | filterdifftest.FeatureDerived | filterdifftest.FeatureEpochFractionNumbers |
			filterdifftest.FeatureNegativeEpochMillis,
		CreateIndex: func(ctx context.Context, name string, body map[string]any) error {
			return createIndex(ctx, base, name, body)
		},
		DeleteIndex: func(name string) { deleteIndex(base, name) },
		Open: func(ctx context.Context, index, bm25 string) (adapters.Adapter, error) {
			cfg := DefaultConfig()
			cfg.URLs, cfg.Index = []string{base}, index
			cfg.TextFields, cfg.ContentField, cfg.MetaFields = []FieldConfig{{Name: bm25}}, bm25, []string{bm25}
			return open(ctx, cfg, adapters.Deps{})
		},
	})
}
