package telemetry

import (
	"context"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// Rerank forwards rerank (§7.6) to the decorated backend; the server's
// Observer (Telemetry.Observer) spans, counts and logs it with every other
// request.
func (b *backend) Rerank(ctx context.Context, p *rcp.RerankCallParams) (*rcp.RerankResult, error) {
	r, ok := b.next.(server.Reranker)
	if !ok {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "rerank is not served")
	}
	return r.Rerank(ctx, p)
}

// Feedback forwards feedback (§7.16) as Rerank does.
func (b *backend) Feedback(ctx context.Context, p *rcp.FeedbackParams) (*rcp.FeedbackResult, error) {
	f, ok := b.next.(server.FeedbackReceiver)
	if !ok {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "feedback is not served")
	}
	return f.Feedback(ctx, p)
}
