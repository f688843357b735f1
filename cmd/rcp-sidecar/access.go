package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// secureHTTP applies the access section to HTTP serving (§5.2, §15): the
// engine is wrapped with each key's scope, the handler with authentication
// and limits, and the listener with TLS (mTLS with a client CA). Without
// keys, max_inflight or TLS it returns the plain server's handler.
func (a *app) secureHTTP(ln net.Listener) (net.Listener, http.Handler, error) {
	ac := a.cfg.Access
	ln, err := tlsListener(ln, ac.TLS)
	if err != nil {
		return nil, nil, err
	}
	if len(ac.Keys) == 0 && ac.MaxInflight == 0 {
		return ln, a.newServer().Handler(), nil
	}
	g, err := newGuard(ac, a)
	if err != nil {
		return nil, nil, err
	}
	b, err := g.Backend(a.backend, a.engine)
	if err != nil {
		return nil, nil, err
	}
	a.log.Info("access control on", "keys", len(ac.Keys), "max_inflight", ac.MaxInflight, "tls", ac.TLS.Enabled(), "mtls", ac.TLS.ClientCAFile != "")
	return ln, g.Middleware(a.serverFor(b).Handler()), nil
}

func newGuard(ac config.Access, a *app) (*access.Guard, error) {
	keys := make([]access.Key, len(ac.Keys))
	for i := range ac.Keys {
		k := &ac.Keys[i]
		d, err := k.Digest()
		if err != nil {
			return nil, fmt.Errorf("access.keys[%d] (%s): %w", i, k.ID, err)
		}
		f, err := k.FilterJSON()
		if err != nil {
			return nil, fmt.Errorf("access.keys[%d] (%s).filter: %w", i, k.ID, err)
		}
		keys[i] = access.Key{ID: k.ID, Digest: d, Engines: k.Engines, Write: k.Write, Filter: f,
			IDPrefix: k.IDPrefix, Tenant: k.Tenant, RPS: k.Rate.RPS, Burst: k.Rate.Burst}
	}
	var isolated []string
	for _, b := range a.cfg.Backends {
		if b.Tenancy.Isolated() {
			isolated = append(isolated, b.Name)
		}
	}
	return access.New(access.Options{Keys: keys, MaxInflight: ac.MaxInflight, DefaultEngine: a.backend, Logger: a.log,
		IndexIsolated: isolated})
}

// serverFor is newServer over another backend (the scoped engine).
func (a *app) serverFor(b server.Backend) *server.Server {
	s := a.cfg.Server
	return server.New(a.observe(b), server.Options{
		Name: "rcp-sidecar", Version: version, Deadline: s.Deadline, Logger: a.log, Observe: a.observer(a.backend),
		BasePath: s.HTTP.BasePath, MaxBodyBytes: s.HTTP.MaxBodyBytes, MaxBatch: s.MaxBatch,
		Stateful: s.HTTP.Stateful, SessionTTL: s.HTTP.SessionTTL, AllowOrigins: s.HTTP.CORSOrigins,
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
