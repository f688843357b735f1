package retrieval_test

import (
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// §13.2 and the server's gating rely on Engine being a server.Backend. The
// assertion lives in a test so that the pipeline does not import the server.
var _ server.Backend = (*retrieval.Engine)(nil)
