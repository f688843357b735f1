// Copyright 2026 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package jsonrpc2

import (
	"testing"
	"unsafe"
)

// TestGrowStack checks, on a new goroutine as a handler and a reader get
// one, that growStack and growReaderStack move the stack to a larger one
// (a local's address changes, as the runtime copies the stack), and that
// a chain of frames about as large as the size each grows for then runs
// without moving it again.
func TestGrowStack(t *testing.T) {
	for _, tc := range []struct {
		name string
		grow func()
		size int
	}{
		{"handler", growStack, handlerStack},
		{"reader", growReaderStack, readerStack},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type result struct{ grew, movedAfter bool }
			done := make(chan result)
			go func() {
				var x byte
				before := uintptr(unsafe.Pointer(&x))
				tc.grow()
				grown := uintptr(unsafe.Pointer(&x))
				deepFrames(tc.size/(2<<10) - 2)
				done <- result{grew: grown != before, movedAfter: uintptr(unsafe.Pointer(&x)) != grown}
			}()
			r := <-done
			if !r.grew {
				t.Error("the stack of a new goroutine did not grow")
			}
			if r.movedAfter {
				t.Errorf("frames of %d bytes moved the grown stack", tc.size-4<<10)
			}
		})
	}
}

// deepFrames calls itself n times, each frame holding 2 KiB.
//
//go:noinline
func deepFrames(n int) byte {
	var pad [2 << 10]byte
	sink(pad[:])
	if n <= 0 {
		return pad[0]
	}
	return deepFrames(n-1) + pad[1]
}
