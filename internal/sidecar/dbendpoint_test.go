package sidecar

import (
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/elasticsearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/opensearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/telemetry"
)

// TestDBEndpoint: each engine's configuration names the database its
// engine spans describe.
func TestDBEndpoint(t *testing.T) {
	isolated := config.Tenancy{Mode: config.TenancyIndex}
	tests := []struct {
		name string
		b    config.Backend
		want telemetry.Endpoint
	}{
		{"elasticsearch one URL with port", config.Backend{Config: &elasticsearch.Config{URLs: []string{"http://es-0.es:9200"}, Index: "docs"}},
			telemetry.Endpoint{System: "elasticsearch", Address: "es-0.es", Port: 9200, Collection: "docs"}},
		{"elasticsearch https without port", config.Backend{Config: &elasticsearch.Config{URLs: []string{"https://es.example.com/"}, Index: "docs"}},
			telemetry.Endpoint{System: "elasticsearch", Address: "es.example.com", Port: 443, Collection: "docs"}},
		{"elasticsearch several URLs", config.Backend{Config: &elasticsearch.Config{URLs: []string{"http://a:9200", "http://b:9200"}, Index: "docs"}},
			telemetry.Endpoint{System: "elasticsearch", Collection: "docs"}},
		{"opensearch IPv6", config.Backend{Config: &opensearch.Config{URLs: []string{"https://[fd00::1]:9201"}, Index: "kb"}},
			telemetry.Endpoint{System: "opensearch", Address: "fd00::1", Port: 9201, Collection: "kb"}},
		{"opensearch tenant indices", config.Backend{Config: &opensearch.Config{URLs: []string{"http://os:9200"}, Index: "kb"}, Tenancy: isolated},
			telemetry.Endpoint{System: "opensearch", Address: "os", Port: 9200}},
		{"qdrant host:port", config.Backend{Config: &qdrant.Config{Address: "qdrant.db:6334", Collection: "c"}},
			telemetry.Endpoint{System: "qdrant", Address: "qdrant.db", Port: 6334, Collection: "c"}},
		{"qdrant default port", config.Backend{Config: &qdrant.Config{Address: "qdrant.db", Collection: "c"}},
			telemetry.Endpoint{System: "qdrant", Address: "qdrant.db", Port: 6334, Collection: "c"}},
		{"memory", config.Backend{Config: &memory.Config{}}, telemetry.Endpoint{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := dbEndpoint(&tc.b); got != tc.want {
				t.Errorf("dbEndpoint = %+v, want %+v", got, tc.want)
			}
		})
	}
}
