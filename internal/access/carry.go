package access

import "context"

// Carrier returns a function that puts the caller of ctx — the
// authenticated key and this request's accounting against its limits —
// into another context, for calls a request makes on a context it does
// not own (an MCP session's). nil when ctx has no caller.
func Carrier(ctx context.Context) func(context.Context) context.Context {
	st := stateFrom(ctx)
	if st == nil {
		return nil
	}
	return func(into context.Context) context.Context { return context.WithValue(into, stateKey{}, st) }
}

// CanWrite reports whether the key may call index/add and index/delete.
func (p *Principal) CanWrite() bool { return p.write }
