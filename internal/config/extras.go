package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// Reranker configures an HTTP cross-encoder reranking service: the
// reranker package's client, advertised as rerank method "cross-encoder"
// only after its start-up check passes.
type Reranker struct {
	// URL is the service root; API picks the request shape: "cohere"
	// (POST /v1/rerank, also Jina, vLLM, Infinity; the default) or "tei"
	// (Text Embeddings Inference's POST /rerank).
	URL string `mapstructure:"url" json:"url"`
	API string `mapstructure:"api" json:"api,omitempty"`
	// Model is sent with each request and advertised in rerank.models.
	Model  string `mapstructure:"model" json:"model"`
	APIKey Secret `mapstructure:"api_key" json:"api_key,omitempty"`
	// MaxCandidates is rerank.maxCandidates: the most passages one call
	// scores (default 100).
	MaxCandidates int `mapstructure:"max_candidates" json:"max_candidates"`
	// Timeout bounds one rerank call, retries included (default 10s);
	// Retries bounds its retries (default 2).
	Timeout time.Duration `mapstructure:"timeout" json:"timeout"`
	Retries int           `mapstructure:"retries" json:"retries"`
}

// Session configures the store behind retrieve's sessionId (§7.7.3).
type Session struct {
	// Dedup suppresses hits a session was already served (default true).
	Dedup *bool `mapstructure:"dedup" json:"dedup,omitempty"`
	// TTLSeconds is a session's idle lifetime (default 1800).
	TTLSeconds int `mapstructure:"ttl_seconds" json:"ttl_seconds"`
	// MaxSessions bounds the sessions kept per backend (default 1000);
	// MaxIDs the hit ids remembered per session (default 500).
	MaxSessions int `mapstructure:"max_sessions" json:"max_sessions"`
	MaxIDs      int `mapstructure:"max_ids" json:"max_ids"`
}

// Feedback configures the feedback method (§7.16).
type Feedback struct {
	// Enabled advertises feedback: signals are validated, counted and
	// logged.
	Enabled bool `mapstructure:"enabled" json:"enabled"`
	// LogQueries puts the query text into the feedback log record.
	LogQueries bool `mapstructure:"log_queries" json:"log_queries,omitempty"`
	// Index, when set, appends every signal to an Elasticsearch or
	// OpenSearch index, tagged with the API key id and tenant.
	Index *FeedbackIndex `mapstructure:"index" json:"index,omitempty"`
}

// FeedbackIndex names the index feedback is appended to.
type FeedbackIndex struct {
	URL      string        `mapstructure:"url" json:"url"`
	Index    string        `mapstructure:"index" json:"index"`
	Username string        `mapstructure:"username" json:"username,omitempty"`
	Password Secret        `mapstructure:"password" json:"password,omitempty"`
	APIKey   Secret        `mapstructure:"api_key" json:"api_key,omitempty"`
	Bearer   Secret        `mapstructure:"bearer" json:"bearer,omitempty"`
	Timeout  time.Duration `mapstructure:"timeout" json:"timeout,omitempty"`
}

// Defaults of the session section.
const (
	DefaultSessionTTLSeconds = 1800
	DefaultSessionMax        = 1000
	DefaultSessionMaxIDs     = 500
	// MaxSessionIDs bounds max_ids: the ids one session may pin in memory.
	MaxSessionIDs = 100000
)

// DedupOn reports whether the session section suppresses repeats.
func (s *Session) DedupOn() bool { return s.Dedup == nil || *s.Dedup }

// WithDefaults returns s with zero values replaced by the defaults.
func (s Session) WithDefaults() Session {
	if s.TTLSeconds == 0 {
		s.TTLSeconds = DefaultSessionTTLSeconds
	}
	if s.MaxSessions == 0 {
		s.MaxSessions = DefaultSessionMax
	}
	if s.MaxIDs == 0 {
		s.MaxIDs = DefaultSessionMaxIDs
	}
	return s
}

var feedbackIndexName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,200}$`)

// validateExtras checks the reranker, session and feedback sections.
func (c *Config) validateExtras() error {
	if r := c.Reranker; r != nil {
		if err := httpURL("reranker.url", r.URL); err != nil {
			return err
		}
		switch {
		case r.API != "" && r.API != "cohere" && r.API != "tei":
			return fmt.Errorf("reranker.api: %q is not cohere or tei", r.API)
		case r.Model == "":
			return errors.New("reranker.model: required")
		case r.MaxCandidates < 0 || r.MaxCandidates > 10000:
			return errors.New("reranker.max_candidates: must be between 1 and 10000")
		case r.Timeout < 0, r.Retries < 0 || r.Retries > 10:
			return errors.New("reranker.timeout and reranker.retries: timeout must not be negative, retries between 0 and 10")
		}
	}
	if s := c.Session; s != nil {
		switch {
		case s.TTLSeconds < 0 || s.TTLSeconds > 7*24*3600:
			return errors.New("session.ttl_seconds: must be between 1 and 604800")
		case s.MaxSessions < 0 || s.MaxSessions > 10_000_000:
			return errors.New("session.max_sessions: must be between 1 and 10000000")
		case s.MaxIDs < 0 || s.MaxIDs > MaxSessionIDs:
			return fmt.Errorf("session.max_ids: must be between 1 and %d", MaxSessionIDs)
		}
	}
	if f := c.Feedback; f != nil && f.Index != nil {
		if err := httpURL("feedback.index.url", f.Index.URL); err != nil {
			return err
		}
		if !feedbackIndexName.MatchString(f.Index.Index) {
			return fmt.Errorf("feedback.index.index: %q is not a valid index name (lower case letters, digits, '.', '_', '-')", f.Index.Index)
		}
	}
	return nil
}

func httpURL(field, s string) error {
	u, err := url.Parse(s)
	switch {
	case s == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%s: %q is not an http(s) URL", field, s)
	case u.User != nil:
		return fmt.Errorf("%s: credentials belong in their own keys, not the URL", field)
	}
	return nil
}
