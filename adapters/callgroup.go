package adapters

import "context"

// CallGroup identifies the engine calls one request makes at the same
// time, such as the lexical and dense recall stages of a hybrid retrieve
// fused by the sidecar. They succeed or fail as a unit: the Engine cancels
// the others when one fails. A decorator that admits calls one at a time
// (a half-open circuit breaker) must therefore admit the whole group or
// none of it, or the member it refuses cancels the member it admitted.
type CallGroup struct {
	_ int // not zero-sized, so that every group has its own address
}

type callGroupKey struct{}

// WithCallGroup returns ctx marked with a new CallGroup: the calls made
// under it (or under contexts derived from it) belong together.
func WithCallGroup(ctx context.Context) context.Context {
	return context.WithValue(ctx, callGroupKey{}, new(CallGroup))
}

// CallGroupOf returns the CallGroup of ctx, or nil when its call stands
// alone.
func CallGroupOf(ctx context.Context) *CallGroup {
	g, _ := ctx.Value(callGroupKey{}).(*CallGroup)
	return g
}
