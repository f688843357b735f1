package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// app is the wired-up process: configuration, logger and one Engine.
type app struct {
	cfg     *config.Config
	log     *slog.Logger
	backend string
	engine  *retrieval.Engine
	// health watches the served backend's health (nil: not reported);
	// /readyz reads it.
	health *health.Watcher
	obs    observability // traces, metrics, request logs (telemetry.go)
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
}

// newBareApp loads the configuration and its logger (the --log-level flag
// wins over server.log_level); no backend is opened yet.
func newBareApp(g *globals) (*app, error) {
	cfg, err := loadConfig(g)
	if err != nil {
		return nil, err
	}
	level := cfg.Server.LogLevel
	if g.logLevel != "" {
		level = g.logLevel
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
	return &app{cfg: cfg, log: log, redact: redact, configPath: g.configPath, cursor: ck}, nil
}

// loadApp reads the configuration (or builds the demo one), then opens the
// selected backend: embedder → adapter → Engine (which probes once).
func loadApp(ctx context.Context, g *globals) (*app, error) {
	a, err := newBareApp(g)
	if err != nil {
		return nil, err
	}
	cfg := a.cfg
	emb, err := openEmbedder(ctx, cfg.Embedder)
	if err != nil {
		return nil, err
	}
	if g.demo {
		a.backend = demoBackend
		a.engine, err = openDemo(ctx, emb, a.log, a)
		return a, err
	}
	return a, a.openSelected(ctx, g.backend, emb)
}

// loadConfig loads --config; with --demo and no --config it starts from
// the defaults plus RCP_* overrides (RCP_EMBEDDER_URL enables dense).
func loadConfig(g *globals) (*config.Config, error) {
	if g.configPath == "" {
		if g.demo {
			return validTelemetry(config.FromEnv())
		}
		return nil, errors.New("no configuration: pass --config FILE, or --demo")
	}
	return validTelemetry(config.Load(g.configPath, newRegistry()))
}

// openSelected opens the backend --backend names and builds its Engine;
// a failed first probe fails start-up.
func (a *app) openSelected(ctx context.Context, name string, emb adapters.Embedder) error {
	b, err := selectBackend(a.cfg, name)
	if err != nil {
		return err
	}
	op, err := openBackend(ctx, b, openOptions{log: a.log, emb: emb, obs: a})
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
		Version:  version,
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
		Element: capability.Element(e.ElementType),
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
func (a *app) newServer() *server.Server { return a.serverFor(a.engine) }

func (a *app) Close() {
	if a.engine != nil {
		a.engine.Close()
	}
	a.closeTelemetry()
}
