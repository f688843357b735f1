// Package sidecar is the composition root of rcp-sidecar: it opens the
// configured backends (one, or several behind a federation), puts them
// behind the resilience decorator and the start-up standby, and wires the
// access layer, telemetry, the hardened HTTP server and the MCP service
// around them. The command in cmd/rcp-sidecar parses flags, calls into
// this package and prints; everything it serves is built here.
package sidecar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/health"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/embedding"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/telemetry"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// Version is the version the sidecar reports (initialize, MCP, telemetry);
// the command sets it from its build stamp.
var Version = "dev"

// Flags are the command line's process-wide choices.
type Flags struct {
	// ConfigPath is the configuration file ("" with Demo: the defaults
	// plus RCP_* overrides).
	ConfigPath string
	// LogLevel, when set, overrides server.log_level.
	LogLevel string
	// Backend selects one backend of several ("" for all: a federation
	// over HTTP and MCP).
	Backend string
	// Demo serves the bundled demo corpus with the in-memory engine.
	Demo bool
}

// Sidecar is the wired-up process: configuration, logger, telemetry and
// what it serves — one Engine, or (fed) every backend's Engine and the
// aggregator over them.
type Sidecar struct {
	cfg     *config.Config
	log     *slog.Logger
	backend string
	engine  *retrieval.Engine
	obs     observability // traces, metrics, request logs (telemetry.go)
	// redact scrubs the configuration's secrets from logs and answers.
	redact *telemetry.Redactor
	// configPath is the file the configuration came from ("" for the
	// demo), re-read on SIGHUP (reload.go).
	configPath string
	// extras is the reranker shared by every backend (extras.go).
	extras extrasState
	// cursor roots every cursor key (cursorkeys.go); nil: each engine
	// and guard keeps a random one.
	cursor [][]byte
	// fed is set when several backends are served together (federation.go).
	fed *federated
	// health watches the served backend's health (nil: not reported);
	// /readyz reads it.
	health *health.Watcher
}

// newBareApp loads the configuration and its logger (the --log-level flag
// wins over server.log_level); no backend is opened yet.
func newBareApp(g *Flags) (*Sidecar, error) {
	cfg, err := loadConfig(g)
	if err != nil {
		return nil, err
	}
	level := cfg.Server.LogLevel
	if g.LogLevel != "" {
		level = g.LogLevel
	}
	redact := secretsRedactor(cfg)
	log, err := newConfigLogger(stderr, level, cfg, redact)
	if err != nil {
		return nil, err
	}
	ck, err := cursorKeys(cfg)
	if err != nil {
		return nil, err
	}
	return &Sidecar{cfg: cfg, log: log, redact: redact, configPath: g.ConfigPath, cursor: ck}, nil
}

// loadApp reads the configuration (or builds the demo one), then opens the
// selected backend: embedder → adapter → Engine (which probes once).
func loadApp(ctx context.Context, g *Flags) (*Sidecar, error) {
	a, err := newBareApp(g)
	if err != nil {
		return nil, err
	}
	cfg := a.cfg
	emb, err := openEmbedder(ctx, cfg.Embedder)
	if err != nil {
		return nil, err
	}
	if g.Demo {
		a.backend = demoBackend
		a.engine, err = openDemo(ctx, emb, a.log, a)
		return a, err
	}
	return a, a.openSelected(ctx, g.Backend, emb)
}

// loadConfig loads --config; with --demo and no --config it starts from
// the defaults plus RCP_* overrides (RCP_EMBEDDER_URL enables dense).
func loadConfig(g *Flags) (*config.Config, error) {
	if g.ConfigPath == "" {
		if g.Demo {
			return validTelemetry(config.FromEnv())
		}
		return nil, errors.New("no configuration: pass --config FILE, set " + ConfigEnv + ", or pass --demo")
	}
	return validTelemetry(config.Load(g.ConfigPath, Registry()))
}

// openSelected opens the backend --backend names and builds its Engine;
// a failed first probe, one attempt within resilience.timeout, fails
// start-up.
func (a *Sidecar) openSelected(ctx context.Context, name string, emb adapters.Embedder) error {
	b, err := selectBackend(a.cfg, name)
	if err != nil {
		return err
	}
	op, err := openBackend(ctx, b, openOptions{log: a.log, emb: emb, obs: a, resilient: true, oneShot: true})
	if err != nil {
		return err
	}
	a.backend, a.engine, a.health = b.Name, op.engine, op.health
	return nil
}

func backendNames(cfg *config.Config) string {
	names := make([]string, len(cfg.Backends))
	for i, b := range cfg.Backends {
		names[i] = b.Name
	}
	return strings.Join(names, ", ")
}

// backendDeps are the dependencies b's adapter is opened with: the
// embedder, and the tenant index settings in tenancy mode index.
func backendDeps(b *config.Backend, log *slog.Logger, emb adapters.Embedder) (adapters.Deps, error) {
	ti, err := b.Tenancy.TenantIndex()
	if err != nil {
		return adapters.Deps{}, fmt.Errorf("backend %s: tenancy.%w", b.Name, err)
	}
	return adapters.Deps{Logger: log, Embedder: emb, TenantIndex: ti}, nil
}

func engineOptions(p config.Policy, t config.Tenancy, emb adapters.Embedder, log *slog.Logger) retrieval.Options {
	return retrieval.Options{
		Name:     "rcp-sidecar",
		Version:  Version,
		Embedder: emb,
		Logger:   log,
		Tenancy:  t.Engine(),
		Policy: capability.Policy{
			MaxK: p.MaxK, DefaultCandidateK: p.DefaultCandidateK, MaxQueryChars: p.MaxQueryChars, Writable: p.Writable,
			Fields: p.Fields, Operators: p.Ops(), Trust: p.Trust,
			Streaming: true, Log: true,
		},
	}
}

// openEmbedder returns nil (no embedder) when the section is absent.
// A zero dimension is learned from one probe request; an int8 embedder is
// always probed, so a server that does not answer int8 requests with
// int8 values stops the start.
func openEmbedder(ctx context.Context, e *config.Embedder) (adapters.Embedder, error) {
	if e == nil {
		return nil, nil
	}
	emb, err := embedding.NewOpenAI(embedding.OpenAIOptions{
		BaseURL: e.URL, Model: e.Model, APIKey: e.APIKey.Reveal(), Dimension: e.Dimension,
		BatchSize: e.BatchSize, Timeout: e.Timeout,
		QueryPrefix: e.QueryPrefix, DocumentPrefix: e.DocumentPrefix, SendInputType: e.SendInputType,
		Element: capability.Element(e.ElementType), EncodingFormat: e.EncodingFormat,
	})
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	if e.Dimension == 0 || emb.Element() != capability.ElementFloat {
		if err := emb.Probe(ctx); err != nil {
			return nil, fmt.Errorf("embedder probe: %w", err)
		}
	}
	return emb, nil
}

// newServer applies the server section to an RCP server over the engine.
func (a *Sidecar) newServer() *server.Server { return a.serverFor(a.engine) }

// Backend is the name of the backend served ("demo" for the demo corpus,
// "federation" for several).
func (a *Sidecar) Backend() string { return a.backend }

// Engine is the Engine served; nil for a federation, or while a backend
// that was down at start-up is still waited for.
func (a *Sidecar) Engine() *retrieval.Engine { return a.engine }

// Health watches the served backend's index or collection health; nil
// when its engine does not report one (Watcher methods take a nil one).
func (a *Sidecar) Health() *health.Watcher { return a.health }

// Config is the configuration the sidecar runs with.
func (a *Sidecar) Config() *config.Config { return a.cfg }

// Handler is the RCP server over the engine at server.http.base_path,
// without the access layer (in-process clients).
func (a *Sidecar) Handler() http.Handler { return a.newServer().Handler() }

// Load reads the configuration (or builds the demo one), then opens the
// selected backend and probes it once: a failed probe fails the load.
func Load(ctx context.Context, g *Flags) (*Sidecar, error) { return loadApp(ctx, g) }

// LoadConfig loads g.ConfigPath, or with Demo and no file the defaults
// plus RCP_* overrides.
func LoadConfig(g *Flags) (*config.Config, error) { return loadConfig(g) }

// CheckConfig loads the configuration at path and runs the checks serve
// runs before it opens anything (the JWT settings, without a fetch); each
// backend's resilience block is filled with the values serve applies,
// defaults included, so that a printout shows them.
func CheckConfig(path string) (*config.Config, error) {
	cfg, err := config.Load(path, Registry())
	if err != nil {
		return nil, err
	}
	if _, err := jwtOptions(cfg.Access.JWT); err != nil {
		return nil, err
	}
	effectiveResilience(cfg)
	return cfg, nil
}

// BackendNames lists cfg's backends, comma-separated.
func BackendNames(cfg *config.Config) string { return backendNames(cfg) }

// Close stops the background loops, closes every Engine and flushes
// telemetry.
func (a *Sidecar) Close() {
	if f := a.fed; f != nil {
		if f.stop != nil {
			f.stop()
		}
		f.wg.Wait()
		f.mu.Lock()
		for _, e := range f.engines {
			e.Close()
		}
		f.mu.Unlock()
	}
	if a.engine != nil {
		a.engine.Close()
	}
	a.closeTelemetry()
}

// ConfigEnv names the environment variable that is the default of
// --config, for hosts that launch the binary with flags of their own.
const ConfigEnv = "RCP_SIDECAR_CONFIG"
