package standby

import (
	"context"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// Rerank implements server.Reranker once the backend is open.
func (v *View) Rerank(ctx context.Context, p *rcp.RerankCallParams) (*rcp.RerankResult, error) {
	return viaLate(v, ctx, p, func(b server.Backend, ctx context.Context, p *rcp.RerankCallParams) (*rcp.RerankResult, error) {
		r, ok := b.(server.Reranker)
		if !ok {
			return nil, rcp.NewError(rcp.CodeCapabilityMissing, "rerank is not served")
		}
		return r.Rerank(ctx, p)
	})
}

// Feedback implements server.FeedbackReceiver once the backend is open.
func (v *View) Feedback(ctx context.Context, p *rcp.FeedbackParams) (*rcp.FeedbackResult, error) {
	return viaLate(v, ctx, p, func(b server.Backend, ctx context.Context, p *rcp.FeedbackParams) (*rcp.FeedbackResult, error) {
		f, ok := b.(server.FeedbackReceiver)
		if !ok {
			return nil, rcp.NewError(rcp.CodeCapabilityMissing, "feedback is not served")
		}
		return f.Feedback(ctx, p)
	})
}
