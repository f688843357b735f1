package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar"
)

type serveFlags struct {
	stdio      bool
	http       string
	cpuProfile string
	engine     string
}

func newServeCmd(g *sidecar.Flags) *cobra.Command {
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
	cmd.Flags().StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile to this file until exit, its samples labelled by pipeline stage (rcp.stage), and the allocation profile to FILE.allocs")
	_ = cmd.Flags().MarkHidden("cpuprofile")
	return cmd
}

func runServe(cmd *cobra.Command, g *sidecar.Flags, f *serveFlags) error {
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	o := sidecar.ServeOptions{Stdio: f.stdio, HTTP: f.http, Engine: f.engine, In: cmd.InOrStdin(), Out: cmd.OutOrStdout()}
	if g.Demo {
		o.Listening = func(addr, base string) { printDemoBanner(cmd.OutOrStdout(), addr, base) }
	}
	return sidecar.Serve(cmd.Context(), g, o)
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
	sidecar.LabelProfiles(true)
	return func() {
		sidecar.LabelProfiles(false)
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
