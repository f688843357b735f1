package config

import (
	"fmt"
	"time"
)

// DefaultShutdownGrace is how long a graceful shutdown lets requests in
// flight finish before answering the rest -32010.
const DefaultShutdownGrace = 10 * time.Second

// Resilience is a backend's `resilience:` block: per-call timeouts,
// retries of idempotent calls on retryable engine errors (§12.2), the
// circuit breaker and the periodic re-probe. Zero values select the
// defaults of package adapters/resilient.
type Resilience struct {
	// Timeout bounds one search or probe attempt; WriteTimeout one write.
	// The request's own deadline wins when sooner (§13.1).
	Timeout      time.Duration `mapstructure:"timeout" json:"timeout,omitempty"`
	WriteTimeout time.Duration `mapstructure:"write_timeout" json:"write_timeout,omitempty"`
	// Retries after the first attempt (default 2; 0 disables).
	Retries *int `mapstructure:"retries" json:"retries,omitempty"`
	// BackoffBase and BackoffMax shape the full-jitter exponential backoff.
	BackoffBase time.Duration `mapstructure:"backoff_base" json:"backoff_base,omitempty"`
	BackoffMax  time.Duration `mapstructure:"backoff_max" json:"backoff_max,omitempty"`
	// BreakerFailures consecutive retryable failures open the breaker for
	// BreakerOpenFor.
	BreakerFailures int           `mapstructure:"breaker_failures" json:"breaker_failures,omitempty"`
	BreakerOpenFor  time.Duration `mapstructure:"breaker_open_for" json:"breaker_open_for,omitempty"`
	// ReprobeInterval is the period of the background re-probe.
	ReprobeInterval time.Duration `mapstructure:"reprobe_interval" json:"reprobe_interval,omitempty"`
}

func (r *Resilience) validate(path string) error {
	for name, d := range map[string]time.Duration{
		"timeout": r.Timeout, "write_timeout": r.WriteTimeout, "backoff_base": r.BackoffBase,
		"backoff_max": r.BackoffMax, "breaker_open_for": r.BreakerOpenFor, "reprobe_interval": r.ReprobeInterval,
	} {
		if d < 0 {
			return fmt.Errorf("%s.%s: must not be negative, got %v", path, name, d)
		}
	}
	switch {
	case r.Retries != nil && (*r.Retries < 0 || *r.Retries > 10):
		return fmt.Errorf("%s.retries: must be 0..10, got %d", path, *r.Retries)
	case r.BreakerFailures < 0:
		return fmt.Errorf("%s.breaker_failures: must not be negative, got %d", path, r.BreakerFailures)
	case r.BackoffMax > 0 && r.BackoffBase > r.BackoffMax:
		return fmt.Errorf("%s.backoff_base: %v exceeds backoff_max %v", path, r.BackoffBase, r.BackoffMax)
	}
	return nil
}

// Grace returns server.shutdown_grace, or the default when unset.
func (s *Server) Grace() time.Duration {
	if s.ShutdownGrace <= 0 {
		return DefaultShutdownGrace
	}
	return s.ShutdownGrace
}
