// Command rcp-sidecar serves the Retrieval Context Protocol (RCP/1) in
// front of a search engine. Subcommands: serve, probe, query, config
// check and version. Logs go to stderr only; in `serve --stdio` stdout
// carries protocol frames and nothing else (§5.1).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	sidecar.Version = version
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rcp-sidecar:", sidecar.Redact(err.Error()))
		os.Exit(1)
	}
}
