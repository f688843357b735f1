package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar"
)

func newRootCmd() *cobra.Command {
	g := &sidecar.Flags{}
	root := &cobra.Command{
		Use:           "rcp-sidecar",
		Short:         "Serve the Retrieval Context Protocol (RCP/1) in front of a search engine",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(),
	}
	root.SetVersionTemplate("{{.Version}}\n") // --version prints what `version` prints
	pf := root.PersistentFlags()
	pf.StringVar(&g.ConfigPath, "config", os.Getenv(sidecar.ConfigEnv), "configuration file (YAML); defaults to $"+sidecar.ConfigEnv)
	pf.StringVar(&g.LogLevel, "log-level", "", "log level: debug, info, warn, error (overrides server.log_level)")
	pf.StringVar(&g.Backend, "backend", "", "backend name to use when the configuration has several")
	pf.BoolVar(&g.Demo, "demo", false, "use the bundled demo corpus with the in-memory engine")
	root.AddCommand(newServeCmd(g), newMCPCmd(g), newProbeCmd(g), newQueryCmd(g), newConfigCmd(g), newVersionCmd())
	return root
}
