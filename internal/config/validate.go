package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
)

// LogLevels are the accepted server.log_level values.
var LogLevels = []string{"debug", "info", "warn", "error"}

// TrustLevels are the accepted policy.trust values (§15, Hit.trust.level).
var TrustLevels = []string{"trusted", "community", "untrusted"}

// Validate checks cross-field rules. Engine settings were validated by
// their own Config during Parse.
func (c *Config) Validate() error {
	if err := c.Server.validate(); err != nil {
		return err
	}
	if c.Embedder != nil {
		if err := c.Embedder.validate(); err != nil {
			return err
		}
	}
	if len(c.Backends) == 0 {
		return errors.New("backends: at least one backend is required")
	}
	if err := c.validateState(); err != nil {
		return err
	}
	if err := c.validateExtras(); err != nil {
		return err
	}
	if err := c.validateBackends(); err != nil {
		return err
	}
	if err := c.Access.validate(backendNames(c.Backends)); err != nil {
		return err
	}
	if err := validateTenants(c.Access.Keys, c.Backends); err != nil {
		return err
	}
	return c.Access.JWT.validateTenancy(c.Backends)
}

func backendNames(bs []Backend) []string {
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.Name
	}
	return names
}

func (s *Server) validate() error {
	if _, _, err := net.SplitHostPort(s.HTTP.Listen); err != nil {
		return fmt.Errorf("server.http.listen: %q is not host:port", s.HTTP.Listen)
	}
	if !strings.HasPrefix(s.HTTP.BasePath, "/") || strings.HasSuffix(s.HTTP.BasePath, "/") && s.HTTP.BasePath != "/" {
		return fmt.Errorf("server.http.base_path: %q must start with / and not end with /", s.HTTP.BasePath)
	}
	switch {
	case s.HTTP.MaxBodyBytes <= 0:
		return errors.New("server.http.max_body_bytes: must be positive")
	case s.HTTP.Stateful && s.HTTP.SessionTTL <= 0:
		return errors.New("server.http.session_ttl: must be positive when stateful")
	case s.HTTP.ReadHeaderTimeout <= 0:
		return errors.New("server.http.read_header_timeout: must be positive")
	case s.HTTP.BodyTimeout <= 0:
		return errors.New("server.http.body_timeout: must be positive")
	case s.HTTP.WriteTimeout <= 0:
		return errors.New("server.http.write_timeout: must be positive")
	case s.HTTP.IdleTimeout <= 0:
		return errors.New("server.http.idle_timeout: must be positive")
	case s.HTTP.MaxConns < 0:
		return errors.New("server.http.max_conns: must not be negative")
	case s.Deadline <= 0:
		return errors.New("server.deadline: must be positive")
	case s.MaxBatch < 1:
		return errors.New("server.max_batch: must be at least 1")
	case !slices.Contains(LogLevels, s.LogLevel):
		return fmt.Errorf("server.log_level: %q is not one of %v", s.LogLevel, LogLevels)
	}
	if _, err := s.CursorKeyBytes(); err != nil {
		return err
	}
	return s.MCP.validate(s.HTTP.BasePath)
}

func (e *Embedder) validate() error {
	u, err := url.Parse(e.URL)
	switch {
	case e.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("embedder.url: %q is not an http(s) URL", e.URL)
	case u.User != nil:
		return errors.New("embedder.url: credentials belong in embedder.api_key, not the URL")
	case e.Model == "":
		return errors.New("embedder.model: required")
	case e.Dimension < 0:
		return errors.New("embedder.dimension: must not be negative")
	case e.BatchSize < 1:
		return errors.New("embedder.batch_size: must be at least 1")
	case e.Timeout <= 0:
		return errors.New("embedder.timeout: must be positive")
	case e.ElementType != "" && e.ElementType != "float" && e.ElementType != "int8":
		return fmt.Errorf("embedder.element_type: %q must be \"float\" or \"int8\"", e.ElementType)
	case e.EncodingFormat != "" && e.EncodingFormat != "base64" && e.EncodingFormat != "float":
		return fmt.Errorf("embedder.encoding_format: %q must be \"base64\" or \"float\"", e.EncodingFormat)
	}
	return nil
}

func (c *Config) validateBackends() error {
	seen := map[string]bool{}
	for i := range c.Backends {
		b := &c.Backends[i]
		path := fmt.Sprintf("backends[%d]", i)
		if b.Name == "" {
			return fmt.Errorf("%s.name: required", path)
		}
		if seen[b.Name] {
			return fmt.Errorf("%s.name: duplicate backend %q", path, b.Name)
		}
		seen[b.Name] = true
		if err := b.Policy.validate(path + ".policy"); err != nil {
			return err
		}
		if err := b.Resilience.validate(path + ".resilience"); err != nil {
			return err
		}
	}
	return nil
}

func (p *Policy) validate(path string) error {
	switch {
	case p.MaxK < 1:
		return fmt.Errorf("%s.max_k: must be at least 1", path)
	case p.DefaultCandidateK < 1 || p.DefaultCandidateK > p.MaxK:
		return fmt.Errorf("%s.default_candidate_k: must be in [1, max_k=%d]", path, p.MaxK)
	case p.MaxQueryChars < 1:
		return fmt.Errorf("%s.max_query_chars: must be at least 1 (characters)", path)
	case p.Trust != "" && !slices.Contains(TrustLevels, p.Trust):
		return fmt.Errorf("%s.trust: %q is not one of %v", path, p.Trust, TrustLevels)
	}
	for _, op := range p.Operators {
		if !slices.Contains(filterlang.AllOps, filterlang.Op(op)) {
			return fmt.Errorf("%s.operators: unknown operator %q", path, op)
		}
	}
	return nil
}

// Ops returns the policy's operators as filterlang.Op values.
func (p *Policy) Ops() []filterlang.Op {
	ops := make([]filterlang.Op, len(p.Operators))
	for i, o := range p.Operators {
		ops[i] = filterlang.Op(o)
	}
	return ops
}
