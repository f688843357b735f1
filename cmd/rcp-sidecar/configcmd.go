package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Configuration tools"}
	cmd.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Load and validate the configuration, then print it resolved (secrets elided)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.configPath == "" {
				return errors.New("config check: pass --config FILE or set " + configEnv)
			}
			cfg, err := config.Load(g.configPath, newRegistry())
			if err != nil {
				return err
			}
			if _, err := jwtOptions(cfg.Access.JWT); err != nil { // the guard's own checks, no fetch
				return err
			}
			effectiveResilience(cfg)
			if err := writeJSON(cmd.OutOrStdout(), cfg); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: ok (%d backend(s): %s)\n", g.configPath, len(cfg.Backends), backendNames(cfg))
			return nil
		},
	})
	return cmd
}

// effectiveResilience fills each backend's resilience block with the
// values serve applies, defaults included, so config check shows them.
func effectiveResilience(cfg *config.Config) {
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		o := resilientOptions(b, nil).Effective()
		retries := o.Retries
		b.Resilience = config.Resilience{Timeout: o.Timeout, WriteTimeout: o.WriteTimeout, Retries: &retries,
			BackoffBase: o.BackoffBase, BackoffMax: o.BackoffMax, BreakerFailures: o.FailureThreshold,
			BreakerOpenFor: o.OpenFor, ReprobeInterval: o.ReprobeInterval}
	}
}
