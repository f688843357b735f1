package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// globals are the persistent flags shared by every subcommand.
type globals struct {
	configPath string
	logLevel   string
	backend    string
	demo       bool
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "rcp-sidecar",
		Short:         "Serve the Retrieval Context Protocol (RCP/1) in front of a search engine",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.configPath, "config", "", "configuration file (YAML)")
	pf.StringVar(&g.logLevel, "log-level", "", "log level: debug, info, warn, error (overrides server.log_level)")
	pf.StringVar(&g.backend, "backend", "", "backend name to use when the configuration has several")
	pf.BoolVar(&g.demo, "demo", false, "use the bundled demo corpus with the in-memory engine")
	root.AddCommand(newServeCmd(g), newMCPCmd(g), newProbeCmd(g), newQueryCmd(g), newConfigCmd(g), newVersionCmd())
	return root
}

// newLogger returns a text logger on w (stderr in production).
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func stderrLogger(level string) *slog.Logger {
	l, err := newLogger(os.Stderr, level)
	if err != nil {
		l, _ = newLogger(os.Stderr, "info")
	}
	return l
}
