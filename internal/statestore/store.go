// Package statestore is the shared state store of a deployment of several
// replicas: a Valkey or Redis server, reached through go-redis, that keeps
// what must be global — retrieve's session sets (session.Shared) and the
// per-key rate limits as one GCRA limit each (access.Limiter, with
// redis_rate).
//
// Nothing a client sent or a document holds is written: session sets and
// their members arrive hashed, rate limits are keyed by a hash of the
// caller's identity, never by a secret.
//
// Every call is bounded: a short timeout (Options.Timeout), no client
// retries, and a circuit breaker (retry's) that refuses calls at
// once after FailureThreshold failures in a row, for OpenFor, then lets
// one call try. A request that carries a budget (WithBudget) waits on the
// store for at most one timeout in all, and skips the store once one of
// its calls failed. A failed or refused call returns an error, on which
// the caller falls back to its own per-replica state; each is counted in
// rcp.state.fallbacks, and the store's availability is logged once per
// transition.
package statestore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/rcp-sidecar/rcp-sidecar/retry"
)

// Defaults applied by Open to zero Options.
const (
	DefaultTimeout   = 50 * time.Millisecond
	DefaultThreshold = 3
	DefaultOpenFor   = 2 * time.Second
	DefaultPrefix    = "rcp:"
)

// Metric names (OTel); Prometheus renders them rcp_state_fallbacks_total
// and rcp_state_circuit_state.
const (
	MetricFallbacks    = "rcp.state.fallbacks"
	MetricCircuitState = "rcp.state.circuit.state"
)

// Operations, as the op label of MetricFallbacks.
const (
	OpSessionSeen   = "session.seen"
	OpSessionRecord = "session.record"
	OpRateLimit     = "rate_limit"
)

// ErrUnavailable is returned, wrapped, by a call the store did not serve:
// the breaker is open, the request already saw the store fail, or its
// budget is spent.
var ErrUnavailable = errors.New("statestore: shared state store unavailable")

// Options configure a Store.
type Options struct {
	// URL is redis:// or rediss://host:port[/db][?addr=host:port...].
	URL string
	// Mode is "standalone" (or ""), "sentinel" (URL names sentinels,
	// Master the master) or "cluster" (URL names nodes).
	Mode, Master string
	// Username and Password authenticate (AUTH).
	Username, Password string
	// Timeout bounds each call; FailureThreshold failures in a row open
	// the breaker for OpenFor.
	Timeout          time.Duration
	FailureThreshold int
	OpenFor          time.Duration
	// Prefix starts every key written.
	Prefix string
	// Logger receives availability transitions (never a key or secret).
	Logger *slog.Logger
	// Meter, when set, receives the fallback counter and breaker gauge.
	Meter metric.Meter
}

// Store is safe for concurrent use.
type Store struct {
	rdb     redis.UniversalClient
	lim     *redis_rate.Limiter
	br      *retry.Breaker
	timeout time.Duration
	prefix  string
	log     *slog.Logger
	fell    metric.Int64Counter // nil without a meter
	down    atomic.Bool         // last availability logged
	seq     atomic.Int64        // last insertion score handed out (order)
}

// Open connects lazily: a store that is down at start-up is a store in
// fallback, not a failed start, and is used as soon as it answers.
func Open(o Options) (*Store, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.FailureThreshold <= 0 {
		o.FailureThreshold = DefaultThreshold
	}
	if o.OpenFor <= 0 {
		o.OpenFor = DefaultOpenFor
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	quietClient.Do(func() { redis.SetLogger(clientLog{o.Logger}) })
	rdb, err := client(o)
	if err != nil {
		return nil, err
	}
	s := &Store{rdb: rdb, lim: redis_rate.NewLimiter(rdb), br: retry.NewBreaker(o.FailureThreshold, o.OpenFor),
		timeout: o.Timeout, prefix: o.Prefix, log: o.Logger}
	if o.Meter != nil {
		if err := s.instruments(o.Meter); err != nil {
			_ = rdb.Close()
			return nil, err
		}
	}
	return s, nil
}

// client builds the go-redis client of o's mode from the URL's
// addresses, database and TLS settings. Whatever the URL's query says,
// the client never retries (the breaker decides), dials once, honours each
// call's deadline, and waits no longer than the timeout to dial, read,
// write or take a pooled connection.
func client(o Options) (redis.UniversalClient, error) {
	// The failover form is the most general: addresses (?addr=...), a
	// database and rediss:// TLS.
	u, err := redis.ParseFailoverURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("statestore: url: %w", err)
	}
	uo := &redis.UniversalOptions{Addrs: u.SentinelAddrs, DB: u.DB, TLSConfig: u.TLSConfig,
		Username: o.Username, Password: o.Password,
		MaxRetries: -1, DialerRetries: 1, ContextTimeoutEnabled: true,
		DialTimeout: o.Timeout, ReadTimeout: o.Timeout, WriteTimeout: o.Timeout, PoolTimeout: o.Timeout}
	if uo.TLSConfig != nil && uo.TLSConfig.MinVersion < tls.VersionTLS12 {
		uo.TLSConfig.MinVersion = tls.VersionTLS12
	}
	switch o.Mode {
	case "", "standalone":
		if len(uo.Addrs) != 1 {
			return nil, errors.New("statestore: url: mode standalone takes one address")
		}
	case "sentinel":
		uo.MasterName = o.Master
		if uo.MasterName == "" {
			return nil, errors.New("statestore: mode sentinel needs the master's name")
		}
	case "cluster":
		if uo.DB != 0 {
			return nil, errors.New("statestore: url: a cluster has no database number")
		}
		uo.IsClusterMode = true
	default:
		return nil, fmt.Errorf("statestore: mode %q is not standalone, sentinel or cluster", o.Mode)
	}
	return redis.NewUniversalClient(uo), nil
}

// quietClient routes go-redis's own log lines (dial failures, pool
// events: addresses, never credentials) to the first store's logger at
// debug level: availability is logged by transition, not per call.
var quietClient sync.Once

type clientLog struct{ log *slog.Logger }

func (c clientLog) Printf(ctx context.Context, format string, v ...any) {
	c.log.DebugContext(ctx, "state store client: "+fmt.Sprintf(format, v...))
}

func (s *Store) instruments(m metric.Meter) error {
	var err error
	s.fell, err = m.Int64Counter(MetricFallbacks, metric.WithUnit("{call}"),
		metric.WithDescription("Shared state store calls not served (breaker open, timeout, error): the replica used its own state instead, by op."))
	if err != nil {
		return err
	}
	_, err = m.Int64ObservableGauge(MetricCircuitState,
		metric.WithDescription("The shared state store's circuit breaker: 0 closed, 1 half-open, 2 open."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(circuitValue(s.br.State()))
			return nil
		}))
	return err
}

func circuitValue(state string) int64 {
	switch state {
	case retry.StateHalfOpen:
		return 1
	case retry.StateOpen:
		return 2
	}
	return 0
}

// State is the breaker's state: "closed", "half-open" or "open".
func (s *Store) State() string { return s.br.State() }

// Close closes the connections.
func (s *Store) Close() error { return s.rdb.Close() }

// Ping checks that the store answers within its timeout.
func (s *Store) Ping(ctx context.Context) error {
	return s.do(ctx, "ping", func(ctx context.Context) error { return s.rdb.Ping(ctx).Err() })
}

// do runs f as one store call: admitted by the breaker and the request's
// budget, bounded by the timeout, its outcome recorded. The error of a
// call not served wraps ErrUnavailable or the client's.
func (s *Store) do(ctx context.Context, op string, f func(ctx context.Context) error) error {
	b := budgetFrom(ctx)
	timeout := s.timeout
	if b != nil {
		if b.failed.Load() {
			return s.fallback(ctx, op, fmt.Errorf("%w: an earlier call of this request failed", ErrUnavailable))
		}
		if timeout = min(timeout, b.left(s.timeout)); timeout <= 0 {
			return s.fallback(ctx, op, fmt.Errorf("%w: the request's store budget is spent", ErrUnavailable))
		}
	}
	trial, _, ok := s.br.Allow(nil)
	if !ok {
		return s.fallback(ctx, op, fmt.Errorf("%w: circuit open", ErrUnavailable))
	}
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	err := guarded(cctx, f)
	cancel()
	if b != nil {
		b.spend(time.Since(start))
	}
	outcome := retry.Healthy
	switch {
	case err == nil, errors.Is(err, redis.Nil):
		err = nil
	case ctx.Err() != nil:
		outcome = retry.Neutral // the caller gave up: nothing learnt about the store
	case timeout < s.timeout && cctx.Err() != nil:
		outcome = retry.Neutral // cut short by the request's budget, not the store's timeout
	default:
		outcome = retry.Failed
	}
	s.br.Record(trial, outcome)
	s.transition()
	if err != nil {
		if b != nil {
			b.failed.Store(true)
		}
		return s.fallback(ctx, op, fmt.Errorf("statestore: %s: %w", op, err))
	}
	return nil
}

// guarded runs f, turning a panic on a reply of an unexpected shape (a
// misbehaving server: the limiter's script result is type-asserted) into
// a failed call rather than a failed request.
func guarded(ctx context.Context, f func(ctx context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unexpected reply: %v", r)
		}
	}()
	return f(ctx)
}

// fallback counts a call not served and returns err.
func (s *Store) fallback(ctx context.Context, op string, err error) error {
	if s.fell != nil {
		s.fell.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(attribute.String("op", op)))
	}
	return err
}

// transition logs the store going down (the breaker opened) or coming
// back (it closed), once each way.
func (s *Store) transition() {
	switch s.br.State() {
	case retry.StateOpen:
		if !s.down.Swap(true) {
			s.log.Warn("shared state store unavailable: sessions and rate limits fall back to each replica's own until it answers again")
		}
	case retry.StateClosed:
		if s.down.Swap(false) {
			s.log.Info("shared state store available again: sessions and rate limits are global again")
		}
	}
}
