package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar"
)

func newConfigCmd(g *sidecar.Flags) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Configuration tools"}
	cmd.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Load and validate the configuration, then print it resolved (secrets elided)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.ConfigPath == "" {
				return errors.New("config check: pass --config FILE or set " + sidecar.ConfigEnv)
			}
			cfg, err := sidecar.CheckConfig(g.ConfigPath) // the guard's own checks, no fetch
			if err != nil {
				return err
			}
			if err := writeJSON(cmd.OutOrStdout(), cfg); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: ok (%d backend(s): %s)\n", g.ConfigPath, len(cfg.Backends), sidecar.BackendNames(cfg))
			return nil
		},
	})
	return cmd
}
