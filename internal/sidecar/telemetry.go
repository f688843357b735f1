package sidecar

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/telemetry"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// telemetryFlushTimeout bounds the final flush of spans and metrics.
const telemetryFlushTimeout = 5 * time.Second

// observability is the app's telemetry (§17), built on first use.
type observability struct {
	once    sync.Once
	t       *telemetry.Telemetry
	metrics *http.Server // the telemetry.metrics_listen server, if any
}

// newConfigLogger is the process logger: server.log_format (text or
// json), with request_id and trace_id on records logged with a request's
// context, and r's secrets scrubbed from every record (§15.6).
func newConfigLogger(w io.Writer, level string, cfg *config.Config, r *telemetry.Redactor) (*slog.Logger, error) {
	l, err := telemetry.NewLogger(w, level, cfg.Server.LogFormat)
	if err != nil {
		return nil, err
	}
	return slog.New(r.Handler(l.Handler())), nil
}

// secretsRedactor scrubs every secret cfg holds or points to (§15.6) from
// logs and client messages. It also becomes the process's, which main
// applies to a fatal error before printing it.
func secretsRedactor(cfg *config.Config) *telemetry.Redactor {
	r := telemetry.NewRedactor(cfg.Secrets())
	processRedactor.Store(r)
	return r
}

// processRedactor is the last secretsRedactor built (nil: none).
var processRedactor atomic.Pointer[telemetry.Redactor]

// Redact scrubs the secrets of the last configuration loaded in this
// process from s (a fatal error, before it is printed).
func Redact(s string) string { return processRedactor.Load().Redact(s) }

// redactFunc is r as server.Options.Redact (nil: nothing to scrub).
func redactFunc(r *telemetry.Redactor) func(string) string {
	if r == nil {
		return nil
	}
	return r.Redact
}

// validTelemetry rejects a configuration whose telemetry section is invalid.
func validTelemetry(cfg *config.Config, err error) (*config.Config, error) {
	if err != nil {
		return nil, err
	}
	if err := cfg.ValidateTelemetry(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// tel returns the process's telemetry. An exporter that cannot be built
// is logged and left out: telemetry never stops the sidecar serving.
func (a *Sidecar) tel() *telemetry.Telemetry {
	a.obs.once.Do(func() { a.obs.t = openTelemetry(a.cfg.Telemetry, a.log, a.redact) })
	return a.obs.t
}

func openTelemetry(tc config.Telemetry, log *slog.Logger, r *telemetry.Redactor) *telemetry.Telemetry {
	o := telemetry.Options{ServiceName: tc.ServiceName, Version: Version, OTLPEndpoint: tc.OTLPEndpoint,
		SampleRatio: tc.SampleRatio, MetricsInterval: tc.MetricsInterval, LogBodies: tc.LogBodies, Logger: log,
		Redactor: r}
	t, err := telemetry.New(context.Background(), o)
	if err == nil {
		return t
	}
	log.Warn("telemetry: OTLP export disabled", "err", err)
	o.OTLPEndpoint = ""
	t, err = telemetry.New(context.Background(), o)
	if err != nil {
		panic(err) // without exporters New only builds in-process state
	}
	return t
}

// observe decorates a served backend: a span, metrics and a log line per
// request, labelled with the backend's name.
func (a *Sidecar) observe(b server.Backend) server.Backend { return a.observeAs(b, a.backend) }

// observeAs is observe with an explicit engine label.
func (a *Sidecar) observeAs(b server.Backend, engine string) server.Backend {
	if a.cfg.Telemetry.Disabled {
		return b
	}
	return a.tel().Backend(b, engine)
}

// observer is server.Options.Observe for engine: a span, counts, latency
// and a log line for every request the server answers, lifecycle methods
// and gating errors included; nil when telemetry is off.
func (a *Sidecar) observer(engine string) telemetry.ObserveFunc {
	if a.cfg.Telemetry.Disabled {
		return nil
	}
	return a.tel().Observer(engine)
}

// observeAdapter decorates b's engine adapter with a span (with the
// OpenTelemetry database attributes of b's engine, dbendpoint.go),
// latency and error count per engine call.
func (a *Sidecar) observeAdapter(ad adapters.Adapter, b *config.Backend) adapters.Adapter {
	if a.cfg.Telemetry.Disabled {
		return ad
	}
	return a.tel().EngineAdapter(ad, b.Name, dbEndpoint(b))
}

// withTelemetry accepts W3C trace context and X-Request-Id on every HTTP
// request and serves GET telemetry.metrics_path on the same listener,
// unless it has its own (telemetry.metrics_listen). There it sits behind
// the access section's key check (any valid key) when keys are
// configured: metrics name engines and traffic, which §15.6 lets a server
// keep from strangers.
func (a *Sidecar) withTelemetry(h http.Handler) (http.Handler, error) {
	tc := a.cfg.Telemetry
	if tc.Disabled {
		return h, nil
	}
	t := a.tel()
	h = t.Middleware(h)
	if tc.MetricsPath == "" || tc.MetricsListen != "" {
		return h, nil
	}
	mh := t.MetricsHandler()
	if len(a.cfg.Access.Keys) > 0 || a.cfg.Access.JWT != nil {
		g, err := newGuard(a.cfg.Access, &Sidecar{cfg: a.cfg, log: a.log}) // any valid key or token: metrics span engines
		if err != nil {
			return nil, err
		}
		mh = g.Middleware(mh)
	}
	return routeMetrics(tc.MetricsPath, mh, h), nil
}

// routeMetrics sends GET/HEAD path to metrics and everything else to next.
func routeMetrics(path string, metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			metrics.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveMetrics starts the unauthenticated metrics listener when
// telemetry.metrics_listen is set (bind it to loopback or a cluster-only
// address). It has no keys, so the keyless Host and Origin check guards it
// (access.Guard.HostCheck): a web page cannot read it through a rebound
// name. It stops with ctx or Close.
func (a *Sidecar) serveMetrics(ctx context.Context) error {
	tc := a.cfg.Telemetry
	if tc.Disabled || tc.MetricsListen == "" || tc.MetricsPath == "" {
		return nil
	}
	ln, err := net.Listen("tcp", tc.MetricsListen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+tc.MetricsPath, a.tel().MetricsHandler())
	hosts, err := access.New(access.Options{AllowedHosts: a.cfg.Access.AllowedHosts, AllowedOrigins: a.cfg.Server.HTTP.CORSOrigins, Logger: a.log})
	if err != nil {
		ln.Close()
		return err
	}
	hc := a.cfg.Server.HTTP
	a.obs.metrics = &http.Server{Handler: hosts.HostCheck(mux), ReadHeaderTimeout: hc.ReadHeaderTimeout, IdleTimeout: hc.IdleTimeout,
		WriteTimeout: hc.WriteTimeout} // a scrape is one short answer: a whole-response bound fits
	a.log.Info("serving metrics", "addr", ln.Addr().String(), "path", tc.MetricsPath)
	srv := a.obs.metrics
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("metrics listener failed", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return nil
}

// closeTelemetry stops the metrics listener and flushes exporters.
func (a *Sidecar) closeTelemetry() {
	if a.obs.metrics != nil {
		_ = a.obs.metrics.Close()
	}
	if a.obs.t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetryFlushTimeout)
	defer cancel()
	if err := a.obs.t.Shutdown(ctx); err != nil {
		a.log.Warn("telemetry flush failed", "err", err)
	}
}

// WithTelemetry serves telemetry.metrics_listen and puts trace context,
// request ids and the metrics path in front of h.
func (a *Sidecar) WithTelemetry(ctx context.Context, h http.Handler) (http.Handler, error) {
	return a.observed(ctx, h)
}

// observed is withTelemetry and serveMetrics for a federation.
func (a *Sidecar) observed(ctx context.Context, h http.Handler) (http.Handler, error) {
	if err := a.serveMetrics(ctx); err != nil {
		return nil, err
	}
	return a.withTelemetry(h)
}
