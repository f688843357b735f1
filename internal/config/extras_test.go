package config_test

import (
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

func TestExtrasSections(t *testing.T) {
	const backend = "backends:\n  - {name: docs, engine: fake, settings: {url: http://x}}\n"
	tests := []struct {
		name, yaml, err string
	}{
		{"reranker ok", "reranker: {url: http://r:8080, model: m, api_key: k1-secret}\n", ""},
		{"reranker tei", "reranker: {url: https://r, api: tei, model: m}\n", ""},
		{"reranker no model", "reranker: {url: http://r}\n", "reranker.model: required"},
		{"reranker bad url", "reranker: {url: r:8080, model: m}\n", "reranker.url"},
		{"reranker creds in url", "reranker: {url: \"http://u:p@r\", model: m}\n", "reranker.url: credentials"},
		{"reranker bad api", "reranker: {url: http://r, model: m, api: soap}\n", "reranker.api"},
		{"reranker unknown key", "reranker: {url: http://r, model: m, topn: 3}\n", `unknown key "reranker.topn"`},
		{"session ok", "session: {ttl_seconds: 60, dedup: false}\n", ""},
		{"session ttl negative", "session: {ttl_seconds: -1}\n", "session.ttl_seconds"},
		{"session max ids", "session: {max_ids: 100000000}\n", "session.max_ids"},
		{"feedback index ok", "feedback: {enabled: true, index: {url: http://es:9200, index: rcp-feedback}}\n", ""},
		{"feedback bad index", "feedback: {enabled: true, index: {url: http://es:9200, index: \"Bad/Name\"}}\n", "feedback.index.index"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(backend+tc.yaml), registry)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Parse error %v, want %q", err, tc.err)
			}
			_ = cfg
		})
	}
	cfg, err := config.Parse([]byte(backend+"reranker: {url: http://r, model: m, api_key: k1-secret}\nsession: {dedup: true}\n"), registry)
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Session.WithDefaults(); d.TTLSeconds != config.DefaultSessionTTLSeconds || !d.DedupOn() || d.MaxIDs != config.DefaultSessionMaxIDs {
		t.Errorf("session defaults %+v", d)
	}
	found := false
	for _, s := range cfg.Secrets() {
		found = found || s == "k1-secret"
	}
	if !found {
		t.Error("reranker.api_key is not among the secrets to redact")
	}
	if cfg.Feedback != nil {
		t.Error("feedback present without a feedback section")
	}
}
