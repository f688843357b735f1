package elasticsearch

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/esconfig"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eshttp"
)

// Secret is a credential that never prints (adapters.Secret: "<secret>"
// in String, GoString, JSON and text forms).
type Secret = adapters.Secret

// FieldConfig names a BM25 field and its query-time boost.
type FieldConfig = esconfig.FieldConfig

// Config is the `settings` block of an elasticsearch backend.
type Config struct {
	// URLs are the node base URLs (http or https). Required.
	URLs []string `json:"urls" mapstructure:"urls"`
	// Index is the target index, alias or pattern. Required.
	Index string `json:"index" mapstructure:"index"`

	// Writable opts in to index/add and index/delete.
	Writable bool `json:"writable,omitempty" mapstructure:"writable"`

	// Common are the settings the OpenSearch adapter takes too (text,
	// vector and citation fields, refresh, basic and bearer auth, CA file,
	// compression, timeout, rerank window).
	esconfig.Common `mapstructure:",squash"`

	// Highlight asks for the best fragment of the content field and
	// reports its offsets in Hit.citation.
	Highlight bool `json:"highlight,omitempty" mapstructure:"highlight"`

	// Outbound authentication: at most one of APIKey, Username+Password,
	// Bearer.
	APIKey Secret `json:"api_key,omitempty" mapstructure:"api_key"`
	// CAFingerprint pins the server CA by SHA-256 hex fingerprint (instead
	// of CAFile).
	CAFingerprint string `json:"ca_fingerprint,omitempty" mapstructure:"ca_fingerprint"`

	// DocumentIDField is a keyword field naming the document a chunk
	// belongs to; when set, unit "document" collapses hits on it.
	DocumentIDField string `json:"document_id_field,omitempty" mapstructure:"document_id_field"`
	// PIT pages sparse and dense results under a point in time with
	// search_after and enables snapshots (indexVersion). It is opt-in: a
	// request cannot say it will page, so every first page then opens a
	// PIT (one more round trip, and an open search context until its
	// keep-alive lapses). Without it pages are offsets.
	PIT bool `json:"pit,omitempty" mapstructure:"pit"`
	// PITKeepAlive is how long a point in time lives between pages
	// (default 1m).
	PITKeepAlive time.Duration `json:"pit_keep_alive,omitempty" mapstructure:"pit_keep_alive"`

	// RerankInferenceID picks the inference endpoint (task_type rerank)
	// that serves rerank when the engine has several; empty uses the only
	// one.
	RerankInferenceID string `json:"rerank_inference_id,omitempty" mapstructure:"rerank_inference_id"`
}

// DefaultConfig returns a Config with defaults applied.
func DefaultConfig() *Config {
	c := &Config{Common: esconfig.Defaults(), PITKeepAlive: time.Minute}
	c.RerankMaxCandidates = DefaultRerankMaxCandidates
	return c
}

// DefaultRerankMaxCandidates is rerank_max_candidates when unset.
const DefaultRerankMaxCandidates = 100

// Validate implements adapters.Config.
func (c *Config) Validate() error {
	for _, check := range []func() error{c.validateURLs, c.validateIndex, c.validateAuth, c.validateOptions} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateURLs() error {
	if len(c.URLs) == 0 {
		return errors.New("elasticsearch: urls is required")
	}
	for _, raw := range c.URLs {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("elasticsearch: urls: %q is not an http(s) URL", raw)
		}
		if u.User != nil {
			return fmt.Errorf("elasticsearch: urls: credentials in %q; use username/password or api_key", u.Redacted())
		}
	}
	return nil
}

func (c *Config) validateIndex() error {
	if c.Index == "" {
		return errors.New("elasticsearch: index is required")
	}
	if strings.ContainsAny(c.Index, " \"\\/?#<>|") {
		return fmt.Errorf("elasticsearch: index %q has an invalid character", c.Index)
	}
	return nil
}

func (c *Config) validateAuth() error {
	n := 0
	for _, set := range []bool{c.APIKey != "", c.Username != "" || c.Password != "", c.Bearer != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return errors.New("elasticsearch: set only one of api_key, username/password, bearer")
	case (c.Username == "") != (c.Password == ""):
		return errors.New("elasticsearch: username and password go together")
	case c.CAFile != "" && c.CAFingerprint != "":
		return errors.New("elasticsearch: set ca_file or ca_fingerprint, not both")
	}
	if c.CAFingerprint != "" {
		if _, err := eshttp.ParseFingerprint(c.CAFingerprint); err != nil {
			return fmt.Errorf("elasticsearch: %w", err)
		}
	}
	return nil
}

func (c *Config) validateOptions() error {
	if err := c.Common.Validate("elasticsearch"); err != nil {
		return err
	}
	for _, f := range c.TextFields {
		if f.Name == "" || f.Boost < 0 {
			return fmt.Errorf("elasticsearch: text_fields: bad entry %+v", f)
		}
	}
	if c.PITKeepAlive != 0 && c.PITKeepAlive < time.Second {
		return errors.New("elasticsearch: pit_keep_alive must be at least 1s")
	}
	if c.Timeout < 0 {
		return errors.New("elasticsearch: timeout must not be negative")
	}
	if c.RerankMaxCandidates < 0 || c.RerankMaxCandidates > maxWindow {
		return fmt.Errorf("elasticsearch: rerank_max_candidates must be between 0 (the default, %d) and %d", DefaultRerankMaxCandidates, maxWindow)
	}
	if strings.ContainsAny(c.RerankInferenceID, " \"\\/?#*,") {
		return fmt.Errorf("elasticsearch: rerank_inference_id %q has an invalid character", c.RerankInferenceID)
	}
	return nil
}

// Endpoint implements adapters.Described: db.system.name "elasticsearch"
// (a name the OpenTelemetry conventions define), the single node when one
// URL is configured, the configured index, and the endpoint ids of the
// calls the adapter makes (as those conventions ask).
func (c *Config) Endpoint() adapters.Endpoint {
	ep := adapters.Endpoint{System: "elasticsearch", Collection: c.Index,
		Operations: adapters.Operations{Search: "search", Upsert: "bulk", Delete: "bulk", Rerank: "inference.inference"}}
	ep.URL = strings.Join(c.URLs, ",")
	ep.Address, ep.Port = adapters.SingleURL(c.URLs)
	return ep
}
