package sidecar

import (
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/elasticsearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/opensearch"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// TestNoResponseCompressionByDefault: beside the engine gzip only costs CPU,
// so Elasticsearch and OpenSearch backends do not ask for it unless the
// file says disable_compression: false (for a slow link).
func TestNoResponseCompressionByDefault(t *testing.T) {
	cfg, err := config.Parse([]byte(`
backends:
  - {name: es, engine: elasticsearch, settings: {urls: ["http://127.0.0.1:9200"], index: a}}
  - {name: es-gzip, engine: elasticsearch, settings: {urls: ["http://127.0.0.1:9200"], index: a, disable_compression: false}}
  - {name: os, engine: opensearch, settings: {urls: ["http://127.0.0.1:9200"], index: a}}
  - {name: os-gzip, engine: opensearch, settings: {urls: ["http://127.0.0.1:9200"], index: a, disable_compression: false}}
`), Registry())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, b := range cfg.Backends {
		switch s := b.Config.(type) {
		case *elasticsearch.Config:
			got[b.Name] = s.DisableCompression
		case *opensearch.Config:
			got[b.Name] = s.DisableCompression
		default:
			t.Fatalf("%s: settings %T", b.Name, b.Config)
		}
	}
	want := map[string]bool{"es": true, "es-gzip": false, "os": true, "os-gzip": false}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: disable_compression %t, want %t", name, got[name], w)
		}
	}
}
