package sidecar

import (
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/elasticsearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/opensearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// TestDBEndpoint: each engine's configuration names the database its
// engine spans describe (the db.operation.name values are the
// Elasticsearch/OpenSearch REST endpoint ids and Qdrant's Points service
// methods), and tenant indices clear the configured collection.
func TestDBEndpoint(t *testing.T) {
	isolated := config.Tenancy{Mode: config.TenancyIndex}
	esOps := adapters.Operations{Search: "search", Upsert: "bulk", Delete: "bulk", Rerank: "inference.inference"}
	osOps := adapters.Operations{Search: "search", Upsert: "bulk", Delete: "bulk", Rerank: "ml.predict"}
	qdrantOps := adapters.Operations{Search: "Query", Upsert: "Upsert", Delete: "Delete"}
	tests := []struct {
		name string
		b    config.Backend
		want adapters.Endpoint
	}{
		{"elasticsearch one URL with port", config.Backend{Config: &elasticsearch.Config{URLs: []string{"http://es-0.es:9200"}, Index: "docs"}},
			adapters.Endpoint{System: "elasticsearch", URL: "http://es-0.es:9200", Address: "es-0.es", Port: 9200, Collection: "docs", Operations: esOps}},
		{"elasticsearch https without port", config.Backend{Config: &elasticsearch.Config{URLs: []string{"https://es.example.com/"}, Index: "docs"}},
			adapters.Endpoint{System: "elasticsearch", URL: "https://es.example.com/", Address: "es.example.com", Port: 443, Collection: "docs", Operations: esOps}},
		{"elasticsearch several URLs", config.Backend{Config: &elasticsearch.Config{URLs: []string{"http://a:9200", "http://b:9200"}, Index: "docs"}},
			adapters.Endpoint{System: "elasticsearch", URL: "http://a:9200,http://b:9200", Collection: "docs", Operations: esOps}},
		{"opensearch IPv6", config.Backend{Config: &opensearch.Config{URLs: []string{"https://[fd00::1]:9201"}, Index: "kb"}},
			adapters.Endpoint{System: "opensearch", URL: "https://[fd00::1]:9201", Address: "fd00::1", Port: 9201, Collection: "kb", Operations: osOps}},
		{"opensearch tenant indices", config.Backend{Config: &opensearch.Config{URLs: []string{"http://os:9200"}, Index: "kb"}, Tenancy: isolated},
			adapters.Endpoint{System: "opensearch", URL: "http://os:9200", Address: "os", Port: 9200, Operations: osOps}},
		{"qdrant host:port", config.Backend{Config: &qdrant.Config{Address: "qdrant.db:6334", Collection: "c"}},
			adapters.Endpoint{System: "qdrant", URL: "qdrant.db:6334", Address: "qdrant.db", Port: 6334, Collection: "c", Operations: qdrantOps}},
		{"qdrant default port", config.Backend{Config: &qdrant.Config{Address: "qdrant.db", Collection: "c"}},
			adapters.Endpoint{System: "qdrant", URL: "qdrant.db", Address: "qdrant.db", Port: 6334, Collection: "c", Operations: qdrantOps}},
		{"memory", config.Backend{Config: &memory.Config{}}, adapters.Endpoint{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := dbEndpoint(&tc.b); got != tc.want {
				t.Errorf("dbEndpoint = %+v, want %+v", got, tc.want)
			}
		})
	}
}
