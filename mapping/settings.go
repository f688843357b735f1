package mapping

import (
	"encoding/json"
	"fmt"
)

// Settings are the index settings a mapping's semantics depend on, as
// GET /<target>/_settings sends them (values are strings; "" when absent).
type Settings struct {
	Name string `json:"name"`
	// KNN is index.knn (OpenSearch): knn_vector fields are built for
	// approximate search only when it is "true".
	KNN string `json:"knn,omitempty"`
	// Shards and Replicas are index.number_of_shards and
	// index.number_of_replicas: they decide whether equal requests see the
	// same segments.
	Shards   string `json:"shards,omitempty"`
	Replicas string `json:"replicas,omitempty"`
}

// ReadSettings reads a GET /<target>/_settings body (or a filtered one
// such as _settings/index.number_of_replicas), by index name.
func ReadSettings(raw []byte) ([]Settings, error) {
	var byIndex map[string]struct {
		Settings struct {
			Index struct {
				KNN      string `json:"knn"`
				Shards   string `json:"number_of_shards"`
				Replicas string `json:"number_of_replicas"`
			} `json:"index"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(raw, &byIndex); err != nil {
		return nil, fmt.Errorf("decode settings: %w", err)
	}
	out := make([]Settings, 0, len(byIndex))
	for _, name := range sortedKeys(byIndex) {
		ix := byIndex[name].Settings.Index
		out = append(out, Settings{Name: name, KNN: ix.KNN, Shards: ix.Shards, Replicas: ix.Replicas})
	}
	return out, nil
}
