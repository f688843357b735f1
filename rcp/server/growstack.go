package server

// growStack grows the calling goroutine's stack at once to what a call
// needs, while it holds only a few frames. A call runs on a goroutine
// of its own (call.execute), which starts with a few kilobytes, or on
// a connection's goroutine (call.executeInline), whose stack the
// garbage collector shrinks while the connection idles; the call's
// deep chain (params decoding, the retrieval pipeline, an engine's or an
// embedder's HTTP client) grew that stack by doubling it several times,
// each time copying every frame already on it and adjusting their
// pointers: 4-6 % of the CPU of a retrieve. One frame of callStack
// bytes makes the runtime size the stack for it in one step, when
// there is almost nothing to copy.
//
//go:noinline
func growStack() {
	var pad [callStack]byte
	sink(pad[:])
}

// callStack is about the stack a retrieve's deepest path uses.
const callStack = 24 << 10

//go:noinline
func sink([]byte) {}
