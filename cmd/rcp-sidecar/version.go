package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the RCP protocol version and the engines compiled in",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
		},
	}
}

// versionLine is what `version` and `--version` print: the build's
// version, the RCP protocol version, the Go release and the engines.
func versionLine() string {
	return fmt.Sprintf("rcp-sidecar %s (RCP/%d, %s, engines: %v)",
		version, rcp.ProtocolVersion, runtime.Version(), sidecar.Registry().Names())
}
