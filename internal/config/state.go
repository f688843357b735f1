package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// State names the shared state store (a Valkey or Redis server) that the
// replicas of one deployment keep what must be global in: retrieve's
// session sets and the per-key rate limits. Absent, each replica keeps
// its own in memory.
type State struct {
	// URL is redis://host:port[/db] or rediss:// (TLS). In mode sentinel
	// it names a sentinel and in mode cluster a node; more are given with
	// ?addr=host:port. Credentials belong in username and password, not
	// the URL.
	URL string `mapstructure:"url" json:"url"`
	// Mode is "standalone" (the default), "sentinel" or "cluster".
	Mode string `mapstructure:"mode" json:"mode,omitempty"`
	// Master is the sentinel master's name (mode sentinel).
	Master string `mapstructure:"master" json:"master,omitempty"`
	// Username and Password authenticate (AUTH); Password alone is the
	// legacy requirepass.
	Username string `mapstructure:"username" json:"username,omitempty"`
	Password Secret `mapstructure:"password" json:"password,omitempty"`
	// Timeout bounds every store call (default 50ms): no request waits on
	// the store longer.
	Timeout time.Duration `mapstructure:"timeout" json:"timeout"`
	// FailureThreshold consecutive failed calls open the store's breaker
	// (default 3) for OpenFor (default 2s); meanwhile every replica falls
	// back to its own sessions and limits.
	FailureThreshold int           `mapstructure:"failure_threshold" json:"failure_threshold"`
	OpenFor          time.Duration `mapstructure:"open_for" json:"open_for"`
	// Prefix starts every key the sidecar writes (default "rcp:"), so
	// deployments can share a server.
	Prefix string `mapstructure:"prefix" json:"prefix"`
}

// Defaults of the state section.
const (
	DefaultStateTimeout   = 50 * time.Millisecond
	DefaultStateThreshold = 3
	DefaultStateOpenFor   = 2 * time.Second
	DefaultStatePrefix    = "rcp:"
	// MaxStateTimeout bounds state.timeout: the store is on the request
	// path, a slow one must fall back fast.
	MaxStateTimeout = time.Second
)

// WithDefaults returns s with zero values replaced by the defaults.
func (s State) WithDefaults() State {
	if s.Mode == "" {
		s.Mode = "standalone"
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultStateTimeout
	}
	if s.FailureThreshold == 0 {
		s.FailureThreshold = DefaultStateThreshold
	}
	if s.OpenFor == 0 {
		s.OpenFor = DefaultStateOpenFor
	}
	if s.Prefix == "" {
		s.Prefix = DefaultStatePrefix
	}
	return s
}

var statePrefix = regexp.MustCompile(`^[A-Za-z0-9:._{}-]{1,64}$`)

// validateState checks the state section.
func (c *Config) validateState() error {
	s := c.State
	if s == nil {
		return nil
	}
	u, err := url.Parse(s.URL)
	switch {
	case s.URL == "" || err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "":
		return fmt.Errorf("state.url: %q is not a redis:// or rediss:// URL", s.URL)
	case u.User != nil:
		return errors.New("state.url: credentials belong in state.username and state.password, not the URL")
	}
	switch s.Mode {
	case "", "standalone", "cluster":
		if s.Master != "" {
			return errors.New("state.master: only mode sentinel names a master")
		}
	case "sentinel":
		if s.Master == "" {
			return errors.New("state.master: required in mode sentinel")
		}
	default:
		return fmt.Errorf("state.mode: %q is not standalone, sentinel or cluster", s.Mode)
	}
	switch {
	case s.Timeout < 0 || s.Timeout > MaxStateTimeout:
		return fmt.Errorf("state.timeout: must be between 1ms and %s", MaxStateTimeout)
	case s.Timeout != 0 && s.Timeout < time.Millisecond:
		return fmt.Errorf("state.timeout: must be between 1ms and %s", MaxStateTimeout)
	case s.FailureThreshold < 0 || s.FailureThreshold > 1000:
		return errors.New("state.failure_threshold: must be between 1 and 1000")
	case s.OpenFor < 0 || s.OpenFor > 10*time.Minute:
		return errors.New("state.open_for: must be between 1ms and 10m")
	case s.Prefix != "" && !statePrefix.MatchString(s.Prefix):
		return fmt.Errorf("state.prefix: %q: at most 64 of A-Z a-z 0-9 : . _ { } -", s.Prefix)
	}
	return nil
}
