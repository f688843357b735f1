package opensearch

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/esconfig"
)

// Secret is a credential that never prints (adapters.Secret: "<secret>"
// in String, GoString, JSON and text forms).
type Secret = adapters.Secret

// FieldConfig names a BM25 field and its query-time boost.
type FieldConfig = esconfig.FieldConfig

// Config is the `settings` block of an opensearch backend.
type Config struct {
	// URLs are the node base URLs (http or https). Required.
	URLs []string `json:"urls" mapstructure:"urls"`
	// Index is the target index or alias. Required.
	Index string `json:"index" mapstructure:"index"`

	// Writable opts in to index/add and index/delete.
	Writable bool `json:"writable,omitempty" mapstructure:"writable"`

	// Common are the settings the Elasticsearch adapter takes too (text,
	// vector and citation fields, refresh, basic and bearer auth, CA file,
	// compression, timeout, rerank window). Outbound authentication: at
	// most one of Username+Password, Bearer and AWS.
	esconfig.Common `mapstructure:",squash"`

	// EfSearch sets the HNSW ef_search of kNN queries (0: index default).
	EfSearch int `json:"ef_search,omitempty" mapstructure:"ef_search"`

	// AWS signs every request with AWS Signature Version 4 (Amazon
	// OpenSearch Service, or OpenSearch Serverless with service aoss).
	AWS *AWS `json:"aws,omitempty" mapstructure:"aws"`

	// RerankModel is the id of an ml-commons model that reranks
	// (TEXT_SIMILARITY, local or remote, e.g. through a Cohere-style
	// rerank connector). When set, the rerank method and retrieve's rerank
	// stage call its _predict API, once a start-up call proved it works
	// (rerank.go). Common.RerankMaxCandidates is at most
	// MaxRerankCandidates.
	RerankModel string `json:"rerank_model,omitempty" mapstructure:"rerank_model"`
}

// DefaultConfig returns a Config with defaults applied.
func DefaultConfig() *Config {
	return &Config{Common: esconfig.Defaults()}
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
	if err := c.Common.Validate("opensearch"); err != nil {
		return err
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
