package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/health"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// accessGuard builds the access section's guard (§5.2, §15): API-key
// and token authentication, per-key limits, the concurrency limit and the
// Host and Origin check. It needs no engine, so it stands in front of the
// standby gate and callers are authenticated before readiness is even
// looked at. Without keys, jwt or max_inflight it admits every caller a
// loopback listener should (HostCheck), until a reload brings keys.
func (a *app) accessGuard() (*access.Guard, error) {
	ac := a.cfg.Access
	g, err := newGuard(ac, a)
	if err != nil || !accessOn(ac) {
		return g, err
	}
	a.log.Info("access control on", "keys", len(ac.Keys), "jwt", ac.JWT != nil, "max_inflight", ac.MaxInflight,
		"max_inflight_per_key", ac.MaxInflightPerKey, "tls", ac.TLS.Enabled(), "mtls", ac.TLS.ClientCAFile != "")
	return g, nil
}

// accessHandler is the RCP server over the engine, each call scoped to
// its caller's key by g. The guard's middleware goes in front of it
// separately (readyHTTP).
func (a *app) accessHandler(g *access.Guard) (http.Handler, error) {
	b, err := g.Backend(a.backend, a.engine)
	if err != nil {
		return nil, err
	}
	h := a.serverFor(b).Handler()
	m := a.cfg.Server.MCP
	if m.Disabled {
		return h, nil
	}
	svc, err := a.mcpService(b)
	if err != nil {
		return nil, err
	}
	return withMCP(m.Path, mcpHandler(svc, g), h), nil
}

// accessOn reports whether the access section asks for a guard: keys,
// tokens or a concurrency limit.
func accessOn(ac config.Access) bool {
	return len(ac.Keys) > 0 || ac.JWT != nil || ac.MaxInflight > 0
}

func newGuard(ac config.Access, a *app) (*access.Guard, error) {
	o, err := guardOptions(ac, a.cfg, a.backend, a.log)
	if err != nil {
		return nil, err
	}
	if st, err := a.stateStore(); err != nil {
		return nil, err
	} else if st != nil {
		o.Limiter = st // keys' rate limits are global across the replicas
	}
	if a.cursor != nil {
		o.CursorKeys = a.cursor
	}
	return access.New(o)
}

// guardOptions maps the access section to the guard's options (New and
// Reload take the same).
func guardOptions(ac config.Access, cfg *config.Config, defaultEngine string, log *slog.Logger) (access.Options, error) {
	keys := make([]access.Key, len(ac.Keys))
	for i := range ac.Keys {
		k := &ac.Keys[i]
		d, err := k.Digest()
		if err != nil {
			return access.Options{}, fmt.Errorf("access.keys[%d] (%s): %w", i, k.ID, err)
		}
		f, err := k.FilterJSON()
		if err != nil {
			return access.Options{}, fmt.Errorf("access.keys[%d] (%s).filter: %w", i, k.ID, err)
		}
		keys[i] = access.Key{ID: k.ID, Digest: d, Engines: k.Engines, Write: k.Write, Admin: k.Admin, Filter: f,
			IDPrefix: k.IDPrefix, Tenant: k.Tenant, RPS: k.Rate.RPS, Burst: k.Rate.Burst}
	}
	var isolated []string
	for _, b := range cfg.Backends {
		if b.Tenancy.Isolated() {
			isolated = append(isolated, b.Name)
		}
	}
	j, err := jwtOptions(ac.JWT)
	if err != nil {
		return access.Options{}, err
	}
	return access.Options{Keys: keys, MaxInflight: ac.MaxInflight, MaxInflightPerKey: ac.MaxInflightPerKey, JWT: j,
		MaxBodyBytes: cfg.Server.HTTP.MaxBodyBytes, DefaultEngine: defaultEngine, Logger: log, IndexIsolated: isolated,
		AllowedHosts: ac.AllowedHosts, AllowedOrigins: cfg.Server.HTTP.CORSOrigins}, nil
}

// jwtOptions maps access.jwt; nil when absent. A jwks_ca_file replaces
// the system roots for the JWKS fetch.
func jwtOptions(j *config.JWT) (*access.JWT, error) {
	if j == nil {
		return nil, nil
	}
	o := &access.JWT{
		Issuer: j.Issuer, Audience: j.Audience, JWKSURL: j.JWKSURL, Algorithms: j.Algorithms, ClockSkew: j.ClockSkew,
		JWKSRefresh: j.JWKSRefresh, JWKSMinRefresh: j.JWKSMinRefresh, JWKSTimeout: j.JWKSTimeout,
		Claims:    access.JWTClaims{Subject: j.Claims.Subject, Scopes: j.Claims.Scopes, Engines: j.Claims.Engines, Tenant: j.Claims.Tenant},
		ReadScope: j.Scopes.Read, WriteScope: j.Scopes.Write, AdminScope: j.Scopes.Admin,
		TenantField: j.TenantField, IDPrefix: j.IDPrefix, RPS: j.Rate.RPS, Burst: j.Rate.Burst,
	}
	if j.JWKSCAFile != "" {
		pem, err := os.ReadFile(j.JWKSCAFile)
		if err != nil {
			return nil, fmt.Errorf("access.jwt.jwks_ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("access.jwt.jwks_ca_file: no PEM certificate found")
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
		o.HTTPClient = &http.Client{Transport: tr}
	}
	return o, access.ValidateJWT(*o)
}

// serverFor applies the server section to an RCP server over b (the
// engine, or the engine scoped per key). shutdown needs an admin key over
// HTTP (access.AuthorizeMethod); configured secrets are scrubbed from what
// the server relays.
func (a *app) serverFor(b server.Backend) *server.Server {
	s := a.cfg.Server
	return server.New(a.observe(b), server.Options{
		Name: "rcp-sidecar", Version: version, Deadline: s.Deadline, Logger: a.log, Observe: a.observer(a.backend),
		BasePath: s.HTTP.BasePath, MaxBodyBytes: s.HTTP.MaxBodyBytes, MaxBatch: s.MaxBatch,
		Stateful: s.HTTP.Stateful, SessionTTL: s.HTTP.SessionTTL, AllowOrigins: s.HTTP.CORSOrigins,
		Authorize: access.AuthorizeMethod, Redact: redactFunc(a.redact),
		ReadyFunc: func(ctx context.Context) ([]string, error) { return health.Ready(ctx, a.health) },
	})
}

// tlsListener wraps ln with TLS 1.2+ when configured; a client CA makes
// verified client certificates mandatory (mTLS).
func tlsListener(ln net.Listener, t config.TLS) (net.Listener, error) {
	if !t.Enabled() {
		return ln, nil
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("access.tls: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if t.ClientCAFile != "" {
		pem, err := os.ReadFile(t.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("access.tls.client_ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("access.tls.client_ca_file: no PEM certificate found")
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tls.NewListener(ln, cfg), nil
}
