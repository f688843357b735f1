// Package server implements RCP/1 sessions and dispatch over stdio and HTTP:
// the method table, lifecycle (§13), capability gating (§7), per-request
// deadlines and cancellation (§7.14, §13.1), progress (§9) and log (§17.1)
// notifications, batching (§11) and the HTTP/SSE transport (§5.2).
package server

import (
	"context"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Backend serves the capability-gated methods. The server calls a method
// only when the matching capability is present in Capabilities(); params
// have been decoded but not otherwise validated. Errors should be *rcp.Error;
// anything else is answered -32603. Implementations are safe for concurrent
// use, and Capabilities() is fixed for the Backend's lifetime (§13.2).
type Backend interface {
	// Info identifies the server (initialize.result.server).
	Info() rcp.PeerInfo
	// Capabilities is the fixed capability set (§13.2).
	Capabilities() rcp.Capabilities
	// Conformance is the level the server actually proves: "L0", "L1" or "L2" (§14).
	Conformance() string
	Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error)
	Embed(ctx context.Context, p *rcp.EmbedParams) (*rcp.EmbedResult, error)
	IndexAdd(ctx context.Context, p *rcp.IndexAddParams) (*rcp.IndexAddResult, error)
	IndexDelete(ctx context.Context, p *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error)
}

// Reranker is implemented by a Backend that serves the rerank method
// (§7.6). The server answers rerank only when the Backend implements it and
// advertises rerank; decorators forward it.
type Reranker interface {
	Rerank(ctx context.Context, p *rcp.RerankCallParams) (*rcp.RerankResult, error)
}

// FeedbackReceiver is implemented by a Backend that serves the feedback
// method (§7.16), under the same rule as Reranker.
type FeedbackReceiver interface {
	Feedback(ctx context.Context, p *rcp.FeedbackParams) (*rcp.FeedbackResult, error)
}
