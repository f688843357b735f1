package access

import (
	"context"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// Rerank implements server.Reranker: the caller must be allowed the
// engine, and the call is charged to its rate limit. Rerank reads no
// corpus, so no tenant scope applies.
func (s *scoped) Rerank(ctx context.Context, p *rcp.RerankCallParams) (*rcp.RerankResult, error) {
	_, ctx, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	r, ok := s.inner.(server.Reranker)
	if !ok {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "rerank is not served")
	}
	return r.Rerank(ctx, p)
}

// Feedback implements server.FeedbackReceiver: checked and charged as
// Rerank, and run with the key's tenant scope on the context, so that the
// backend tags what it records with the caller's tenant.
func (s *scoped) Feedback(ctx context.Context, p *rcp.FeedbackParams) (*rcp.FeedbackResult, error) {
	pr, ctx, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	if pr != nil {
		t, err := s.scopeOf(pr)
		if err != nil {
			return nil, err
		}
		ctx = withTenant(ctx, t)
	}
	f, ok := s.inner.(server.FeedbackReceiver)
	if !ok {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "feedback is not served")
	}
	return f.Feedback(ctx, p)
}
