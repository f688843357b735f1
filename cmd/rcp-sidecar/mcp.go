package main

import (
	"github.com/spf13/cobra"

	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar"
)

func newMCPCmd(g *sidecar.Flags) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the backends to MCP clients over stdio (stdout carries MCP frames only)",
		Long: "Serve the configured backends as Model Context Protocol tools over stdio, for agents that spawn\n" +
			"the sidecar (Claude Desktop, Cursor, VS Code, agent frameworks). One search tool per backend, one\n" +
			"over all of them when several are configured, write tools where the backend is writable. Logs go\n" +
			"to stderr. `serve` mounts the same tools over Streamable HTTP at server.mcp.path.",
		Example: "  rcp-sidecar mcp --demo\n  rcp-sidecar mcp --config config.yaml\n  rcp-sidecar mcp --config config.yaml --backend docs",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sidecar.ServeMCP(cmd.Context(), g, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}
