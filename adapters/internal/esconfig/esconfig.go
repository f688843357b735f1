// Package esconfig is the part of a backend's `settings` the
// Elasticsearch-family adapters read alike. Each adapter's Config embeds
// Common (squashed: its keys sit beside the adapter's own) and adds what
// only its engine has; the target (urls, index) and writable stay on the
// adapter's Config.
package esconfig

import (
	"fmt"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// FieldConfig names a BM25 field and its query-time boost.
type FieldConfig struct {
	Name  string  `json:"name" mapstructure:"name"`
	Boost float64 `json:"boost,omitempty" mapstructure:"boost"`
}

// Common are the settings both Elasticsearch-family adapters take.
type Common struct {
	// TextFields are the BM25 fields with boosts; empty means every
	// searchable text field the probe finds.
	TextFields []FieldConfig `json:"text_fields,omitempty" mapstructure:"text_fields"`
	// ContentField supplies Hit.text (default: "text", "content" or
	// "body", else the first text field).
	ContentField string `json:"content_field,omitempty" mapstructure:"content_field"`
	// VectorField selects the vector field (dense_vector, knn_vector;
	// default: the first one the probe offers).
	VectorField string `json:"vector_field,omitempty" mapstructure:"vector_field"`
	// TitleField and URIField feed Hit.citation (default: detected
	// "title" and "url"/"uri" fields).
	TitleField string `json:"title_field,omitempty" mapstructure:"title_field"`
	URIField   string `json:"uri_field,omitempty" mapstructure:"uri_field"`
	// MultiMatchType is the multi_match type (default best_fields) and
	// TieBreaker its tie_breaker.
	MultiMatchType string   `json:"multi_match_type,omitempty" mapstructure:"multi_match_type"`
	TieBreaker     *float64 `json:"tie_breaker,omitempty" mapstructure:"tie_breaker"`
	// MetaFields limits Hit.meta to these _source fields (names or
	// patterns as _source includes take them, e.g. "author", "meta.*");
	// empty returns every field. The fields the hit itself is built from
	// (content, title, URI, document id) are fetched regardless.
	MetaFields []string `json:"meta_fields,omitempty" mapstructure:"meta_fields"`

	// Refresh is the refresh policy of writes: wait_for (default), true or
	// false.
	Refresh string `json:"refresh,omitempty" mapstructure:"refresh"`

	// Username and Password authenticate with HTTP basic auth; Bearer
	// sends a bearer token. The adapter says which other schemes it has
	// and that at most one is set.
	Username string          `json:"username,omitempty" mapstructure:"username"`
	Password adapters.Secret `json:"password,omitempty" mapstructure:"password"`
	Bearer   adapters.Secret `json:"bearer,omitempty" mapstructure:"bearer"`
	// CAFile is a PEM bundle to trust for https URLs.
	CAFile string `json:"ca_file,omitempty" mapstructure:"ca_file"`

	// DisableCompression stops asking for gzip responses (the default; set
	// it to false for a slow link): on loopback or a fast LAN compression
	// only costs CPU on both sides (a page of 100 passages is ~150 kB;
	// gzip adds milliseconds to every search).
	DisableCompression bool `json:"disable_compression" mapstructure:"disable_compression"`

	// Timeout bounds each HTTP request as a backstop to the request
	// context (default 30s).
	Timeout time.Duration `json:"timeout,omitempty" mapstructure:"timeout"`

	// RerankMaxCandidates bounds the passages of one rerank call and
	// retrieve's rerank window (rerank.maxCandidates, default 100).
	RerankMaxCandidates int `json:"rerank_max_candidates,omitempty" mapstructure:"rerank_max_candidates"`
}

// Defaults are the Common defaults: refresh wait_for, multi_match
// best_fields, a 30s timeout, no compression.
func Defaults() Common {
	return Common{Refresh: "wait_for", MultiMatchType: "best_fields", Timeout: 30 * time.Second, DisableCompression: true}
}

// Validate checks the settings both adapters check alike; engine prefixes
// the messages.
func (c *Common) Validate(engine string) error {
	switch c.Refresh {
	case "", "wait_for", "true", "false":
	default:
		return fmt.Errorf("%s: refresh %q is not wait_for, true or false", engine, c.Refresh)
	}
	for _, f := range c.MetaFields {
		if strings.TrimSpace(f) == "" {
			return fmt.Errorf("%s: meta_fields: empty field name", engine)
		}
	}
	return nil
}
