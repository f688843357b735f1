package opensearch

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// Secret is a credential that never prints (adapters.Secret: "<secret>"
// in String, GoString, JSON and text forms).
type Secret = adapters.Secret

// FieldConfig names a BM25 field and its query-time boost.
type FieldConfig struct {
	Name  string  `json:"name" mapstructure:"name"`
	Boost float64 `json:"boost,omitempty" mapstructure:"boost"`
}

// Config is the `settings` block of an opensearch backend.
type Config struct {
	// URLs are the node base URLs (http or https). Required.
	URLs []string `json:"urls" mapstructure:"urls"`
	// Index is the target index or alias. Required.
	Index string `json:"index" mapstructure:"index"`

	// TextFields are the BM25 fields with boosts; empty means every text
	// field the probe finds.
	TextFields []FieldConfig `json:"text_fields,omitempty" mapstructure:"text_fields"`
	// ContentField supplies Hit.text (default: "text", "content" or
	// "body", else the first text field).
	ContentField string `json:"content_field,omitempty" mapstructure:"content_field"`
	// VectorField selects the knn_vector field (default: the first one).
	VectorField string `json:"vector_field,omitempty" mapstructure:"vector_field"`
	// TitleField and URIField feed Hit.citation (default: detected
	// "title" and "url"/"uri" fields).
	TitleField string `json:"title_field,omitempty" mapstructure:"title_field"`
	URIField   string `json:"uri_field,omitempty" mapstructure:"uri_field"`
	// MultiMatchType is the multi_match type (default best_fields) and
	// TieBreaker its tie_breaker.
	MultiMatchType string   `json:"multi_match_type,omitempty" mapstructure:"multi_match_type"`
	TieBreaker     *float64 `json:"tie_breaker,omitempty" mapstructure:"tie_breaker"`
	// EfSearch sets the HNSW ef_search of kNN queries (0: index default).
	EfSearch int `json:"ef_search,omitempty" mapstructure:"ef_search"`
	// MetaFields limits Hit.meta to these _source fields (names or
	// patterns as _source includes take them, e.g. "author", "meta.*");
	// empty returns every field. The content, title and URI fields are
	// fetched regardless, as they feed the hit itself.
	MetaFields []string `json:"meta_fields,omitempty" mapstructure:"meta_fields"`

	// Writable opts in to index/add and index/delete; Refresh is the
	// refresh policy of writes: wait_for (default), true or false.
	Writable bool   `json:"writable,omitempty" mapstructure:"writable"`
	Refresh  string `json:"refresh,omitempty" mapstructure:"refresh"`

	// Outbound authentication: at most one of Username+Password, Bearer
	// and AWS.
	Username string `json:"username,omitempty" mapstructure:"username"`
	Password Secret `json:"password,omitempty" mapstructure:"password"`
	Bearer   Secret `json:"bearer,omitempty" mapstructure:"bearer"`
	// AWS signs every request with AWS Signature Version 4 (Amazon
	// OpenSearch Service, or OpenSearch Serverless with service aoss).
	AWS *AWS `json:"aws,omitempty" mapstructure:"aws"`
	// CAFile is a PEM bundle to trust for https URLs.
	CAFile string `json:"ca_file,omitempty" mapstructure:"ca_file"`

	// DisableCompression stops asking for gzip responses (the default; set
	// it to false for a slow link): on loopback or a fast LAN compression
	// only costs CPU on both sides (a page of 100
	// passages is ~150 kB; gzip adds milliseconds to every search).
	DisableCompression bool `json:"disable_compression" mapstructure:"disable_compression"`

	// Timeout bounds each HTTP request as a backstop to the request
	// context (default 30s).
	Timeout time.Duration `json:"timeout,omitempty" mapstructure:"timeout"`

	// RerankModel is the id of an ml-commons model that reranks
	// (TEXT_SIMILARITY, local or remote, e.g. through a Cohere-style
	// rerank connector). When set, the rerank method and retrieve's rerank
	// stage call its _predict API, once a start-up call proved it works
	// (rerank.go). RerankMaxCandidates is rerank.maxCandidates (default
	// 100, at most MaxRerankCandidates).
	RerankModel         string `json:"rerank_model,omitempty" mapstructure:"rerank_model"`
	RerankMaxCandidates int    `json:"rerank_max_candidates,omitempty" mapstructure:"rerank_max_candidates"`
}

// DefaultConfig returns a Config with defaults applied.
func DefaultConfig() *Config {
	return &Config{Refresh: "wait_for", MultiMatchType: "best_fields", Timeout: 30 * time.Second,
		DisableCompression: true}
}

// Validate implements adapters.Config.
func (c *Config) Validate() error {
	for _, check := range []func() error{c.validateURLs, c.validateIndex, c.validateAuth, c.validateOptions, c.validateRerank} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateURLs() error {
	if len(c.URLs) == 0 {
		return errors.New("opensearch: urls is required")
	}
	for _, raw := range c.URLs {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("opensearch: urls: %q is not an http(s) URL", raw)
		}
		if u.User != nil {
			return fmt.Errorf("opensearch: urls: credentials in %q; use username/password or bearer", u.Redacted())
		}
	}
	return nil
}

func (c *Config) validateIndex() error {
	if c.Index == "" {
		return errors.New("opensearch: index is required")
	}
	if strings.ContainsAny(c.Index, " \"\\/?#<>|,*") || strings.HasPrefix(c.Index, "_") {
		return fmt.Errorf("opensearch: index %q is not a single index or alias name", c.Index)
	}
	return nil
}

func (c *Config) validateAuth() error {
	if c.Bearer != "" && (c.Username != "" || c.Password != "") {
		return errors.New("opensearch: set either username/password or bearer, not both")
	}
	if c.AWS != nil {
		if c.Bearer != "" || c.Username != "" || c.Password != "" {
			return errors.New("opensearch: aws signs every request; do not set username/password or bearer with it")
		}
		if err := c.AWS.validate(c.URLs); err != nil {
			return err
		}
	}
	if (c.Username == "") != (c.Password == "") {
		return errors.New("opensearch: username and password go together")
	}
	return nil
}

func (c *Config) validateOptions() error {
	switch c.Refresh {
	case "", "wait_for", "true", "false":
	default:
		return fmt.Errorf("opensearch: refresh %q is not wait_for, true or false", c.Refresh)
	}
	switch c.MultiMatchType {
	case "", "best_fields", "most_fields", "cross_fields":
	default:
		return fmt.Errorf("opensearch: multi_match_type %q is not best_fields, most_fields or cross_fields", c.MultiMatchType)
	}
	if c.EfSearch < 0 || c.Timeout < 0 {
		return errors.New("opensearch: ef_search and timeout must not be negative")
	}
	if tb := c.TieBreaker; tb != nil && (*tb < 0 || *tb > 1) {
		return errors.New("opensearch: tie_breaker must be in [0, 1]")
	}
	for _, f := range c.MetaFields {
		if strings.TrimSpace(f) == "" {
			return errors.New("opensearch: meta_fields: empty field name")
		}
	}
	for _, f := range c.TextFields {
		if f.Name == "" || f.Boost < 0 {
			return errors.New("opensearch: text_fields entries need a name and a non-negative boost")
		}
	}
	return nil
}

// Endpoint implements adapters.Described: db.system.name "opensearch"
// (a name the OpenTelemetry conventions define), the single node when one
// URL is configured, the configured index, and the endpoint ids of the
// calls the adapter makes (as those conventions ask).
func (c *Config) Endpoint() adapters.Endpoint {
	ep := adapters.Endpoint{System: "opensearch", Collection: c.Index,
		Operations: adapters.Operations{Search: "search", Upsert: "bulk", Delete: "bulk", Rerank: "ml.predict"}}
	ep.URL = strings.Join(c.URLs, ",")
	ep.Address, ep.Port = adapters.SingleURL(c.URLs)
	return ep
}
