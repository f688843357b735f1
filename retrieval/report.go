package retrieval

import (
	"context"
	"slices"
	"strconv"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// progressGate is optionally implemented by an rcp.Reporter that knows up
// front whether Progress would send anything (§9: only with a
// progressToken); the Engine then skips building partial hits nobody gets.
type progressGate interface{ ProgressEnabled() bool }

// logGate is optionally implemented by an rcp.Reporter that knows up front
// whether a notifications/log frame at level would be sent (§17.1).
type logGate interface{ LogEnabled(level string) bool }

// dropAll is the Reporter rcp.ReporterFrom returns when ctx has none.
var dropAll = rcp.ReporterFrom(context.Background())

// progressOn reports whether rep may deliver progress notifications.
func progressOn(rep rcp.Reporter) bool {
	if rep == dropAll {
		return false
	}
	g, ok := rep.(progressGate)
	return !ok || g.ProgressEnabled()
}

// logOn reports whether rep may deliver a log at level.
func logOn(rep rcp.Reporter, level string) bool {
	if rep == dropAll {
		return false
	}
	g, ok := rep.(logGate)
	return !ok || g.LogEnabled(level)
}

// reportRecall sends the single-stage recall progress with the first k
// hits as partial results (§9) and keeps them in rk, so that finish can
// return them instead of building the same hits twice.
func (e *Engine) reportRecall(rep rcp.Reporter, r *retrieval, rk *ranking) {
	if !progressOn(rep) {
		return
	}
	top := head(rk.items, r.funnel.K)
	rk.partial = e.hits(r, rk.key, top)
	if len(top) > 0 {
		rk.partialAt = &top[0]
	}
	rep.Progress("recall", 0.5, "recalled "+strconv.Itoa(rk.candidates)+" candidates", rk.partial)
}

// pageHits makes the page's hits, reusing the recall partial when the page
// is exactly those items (no offset, reordering or filtering since). The
// slice is copied so the result never aliases what the reporter was given.
func (e *Engine) pageHits(r *retrieval, rk *ranking, page []item) []rcp.Hit {
	if len(page) > 0 && len(page) == len(rk.partial) && &page[0] == rk.partialAt {
		return slices.Clone(rk.partial)
	}
	return e.hits(r, rk.key, page)
}
