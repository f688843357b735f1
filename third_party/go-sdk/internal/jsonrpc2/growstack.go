// Copyright 2026 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package jsonrpc2

// growStack grows the calling goroutine's stack at once to what a
// request's handling typically needs, while it holds only a frame or
// two. A handler, and a connection's reader, run on goroutines of their
// own, which start with a few kilobytes; a tool call's chain grew that
// stack by doubling it several times, each time copying every frame
// already on it and adjusting their pointers. Over Streamable HTTP
// without sessions every request is a connection of its own, so every
// request paid this twice. One frame of handlerStack bytes makes the
// runtime size the stack for it in one step, when there is almost
// nothing to copy.
//
//go:noinline
func growStack() {
	var pad [handlerStack]byte
	sink(pad[:])
}

// growReaderStack is growStack for a connection's reader, whose chain
// (reading and decoding a message, queueing it) is shallower.
//
//go:noinline
func growReaderStack() {
	var pad [readerStack]byte
	sink(pad[:])
}

// handlerStack and readerStack are about the stacks a tool call's
// handling and a message's reading use.
const (
	handlerStack = 24 << 10
	readerStack  = 12 << 10
)

//go:noinline
func sink([]byte) {}
