package federation

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// MetaFederation is the _meta key carrying the hop budget and path (§16.2).
const MetaFederation = "federation"

// MetaDeadline is the _meta key carrying the remaining budget in ms (§16.2).
const MetaDeadline = "deadlineMs"

// MetaDegraded is the result _meta key listing engines that did not answer.
const MetaDegraded = "degraded"

// Hop is the _meta.federation object (§16.2).
type Hop struct {
	Depth int      `json:"depth"`
	Path  []string `json:"path"`
}

// readHop returns the request's _meta.federation, or {def, []} when it is
// absent or malformed (the request then originates here). A negative depth
// counts as 0.
func readHop(meta map[string]any, def int) Hop {
	raw, ok := meta[MetaFederation]
	if !ok || raw == nil {
		return Hop{Depth: def}
	}
	b, err := json.Marshal(raw)
	var h Hop
	if err != nil || json.Unmarshal(b, &h) != nil {
		return Hop{Depth: def}
	}
	h.Depth = max(h.Depth, 0)
	return h
}

// next is the hop forwarded downstream: depth decremented, own identity
// appended (§16.2 MUST).
func (h Hop) next(identity string) Hop {
	path := append(slices.Clone(h.Path), identity)
	return Hop{Depth: max(h.Depth-1, 0), Path: path}
}

// onPath reports whether identity already appears on the path.
func (h Hop) onPath(identity string) bool {
	return identity != "" && slices.Contains(h.Path, identity)
}

// budget derives the downstream context: the caller's deadline less
// reserve, so every engine (and every forwarded _meta.deadlineMs) gets a
// strictly smaller budget and fusion still fits (§16.2). A deadline too
// close to honour is -32014.
func budget(ctx context.Context, reserve time.Duration) (context.Context, context.CancelFunc, *rcp.Error) {
	dl, ok := ctx.Deadline()
	if !ok {
		c, cancel := context.WithCancel(ctx)
		return c, cancel, nil
	}
	if time.Until(dl) <= reserve {
		return nil, nil, rcp.NewError(rcp.CodeTimeout, "deadline too short to federate (reserve %s)", reserve)
	}
	c, cancel := context.WithDeadlineCause(ctx, dl.Add(-reserve), rcp.ErrTimeout)
	return c, cancel, nil
}

// remainingMs is the _meta.deadlineMs for a call made under ctx: the
// whole milliseconds left, at least 1; ok is false without a deadline.
func remainingMs(ctx context.Context) (ms int64, ok bool) {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0, false
	}
	return max(time.Until(dl).Milliseconds(), 1), true
}

// forwardMeta is the _meta sent downstream: only the federation hop.
// Other keys (progressToken, traceparent) stay with this hop.
func forwardMeta(h Hop) map[string]any {
	return map[string]any{MetaFederation: h}
}
