package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// stderr receives logs; tests may redirect it.
var stderr io.Writer = os.Stderr

type serveFlags struct {
	stdio      bool
	http       string
	cpuProfile string
	engine     string
}

func newServeCmd(g *globals) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve RCP over stdio (--stdio) or HTTP (default)",
		Example: "  rcp-sidecar serve --demo\n" +
			"  rcp-sidecar serve --stdio --config config.yaml --engine docs\n" +
			"  rcp-sidecar serve --config config.yaml   # several backends: /rcp federates, /engines/<id>/rcp each",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, g, f) },
	}
	cmd.Flags().BoolVar(&f.stdio, "stdio", false, "speak NDJSON on stdin/stdout (§5.1); stdout carries protocol frames only")
	cmd.Flags().StringVar(&f.http, "http", "", "HTTP listen address (overrides server.http.listen)")
	cmd.Flags().StringVar(&f.engine, "engine", "", "serve only this backend (same as --backend); without it, HTTP federates several backends")
	cmd.Flags().StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile to this file until exit, and the allocation profile to FILE.allocs")
	_ = cmd.Flags().MarkHidden("cpuprofile")
	return cmd
}

func runServe(cmd *cobra.Command, g *globals, f *serveFlags) error {
	if f.stdio && f.http != "" {
		return errors.New("--stdio and --http are exclusive")
	}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	ctx := cmd.Context()
	if done, err := maybeFederate(cmd, g, f); done { // several backends: §16 federation
		return err
	}
	rs, err := loadResilientApp(ctx, g) // an engine that is down is waited for (resilience.go)
	if err != nil {
		return err
	}
	defer rs.Close()
	a := rs.a
	if err := a.serveMetrics(ctx); err != nil { // telemetry.metrics_listen (telemetry.go)
		return err
	}
	if f.stdio {
		a.log.Info("serving RCP over stdio", "backend", a.backend)
		return rs.serveStdio(ctx, cmd.InOrStdin(), cmd.OutOrStdout())
	}
	addr := a.cfg.Server.HTTP.Listen
	if f.http != "" {
		addr = f.http
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if g.demo {
		printDemoBanner(cmd.OutOrStdout(), ln.Addr().String(), a.cfg.Server.HTTP.BasePath)
	}
	logCursorKeys(a.cfg, a.log)
	a.log.Info("serving RCP over HTTP", "addr", ln.Addr().String(), "base", a.cfg.Server.HTTP.BasePath, "backend", a.backend)
	ln, h, err := rs.readyHTTP(ctx, ln) // access section (keys, limits, TLS) once the engine is up
	if err != nil {
		return err
	}
	if h, err = a.withTelemetry(h); err != nil { // trace context, request ids, /metrics
		return err
	}
	defer watchReload(ctx, &reloader{path: a.configPath, guard: rs.guard, defaultEngine: a.backend, log: a.log, running: a.cfg})() // SIGHUP (reload.go)
	return rs.serveHTTP(ctx, ln, h)
}

// serveHTTP serves within the limits of s.HTTP until ctx is done, then
// drains in-flight requests within s.ShutdownGrace (resilience.go).
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, s *config.Server, log *slog.Logger) error {
	return serveHTTPDrain(ctx, ln, h, serverDrain(s, log), s.HTTP)
}

func startCPUProfile(path string) (func(), error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		fh.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		fh.Close()
		if ah, err := os.Create(path + ".allocs"); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(ah, 0)
			ah.Close()
		}
	}, nil
}

func printDemoBanner(w io.Writer, addr, base string) {
	url := "http://" + addr + base
	fmt.Fprintf(w, "rcp-sidecar demo: RCP/1 over HTTP at %s (in-memory engine, bundled corpus)\n\n", url)
	fmt.Fprintf(w, "Try:\n  curl -s %s/retrieve -H 'Content-Type: application/json' \\\n", url)
	fmt.Fprintln(w, `    -d '{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"how does a search engine rank documents","k":3,"mode":"sparse","filter":{"field":"topic","op":"eq","value":"search"}}}'`)
	fmt.Fprintf(w, "\nor: go run ./cmd/rcp-sidecar query --url %s \"why do comets have tails\"\n\n", url)
}
