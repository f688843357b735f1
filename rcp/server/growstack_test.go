package server

import (
	"testing"
	"unsafe"
)

// TestGrowStack checks, on a new goroutine as a call gets one, that
// growStack moves the stack to a larger one (a local's address changes,
// as the runtime copies the stack), and that a chain of frames about as
// large as callStack then runs without moving it again.
func TestGrowStack(t *testing.T) {
	type result struct{ grew, movedAfter bool }
	done := make(chan result)
	go func() {
		var x byte
		before := uintptr(unsafe.Pointer(&x))
		growStack()
		grown := uintptr(unsafe.Pointer(&x))
		deepFrames(callStack/(2<<10) - 2)
		done <- result{grew: grown != before, movedAfter: uintptr(unsafe.Pointer(&x)) != grown}
	}()
	r := <-done
	if !r.grew {
		t.Error("growStack did not grow a new goroutine's stack")
	}
	if r.movedAfter {
		t.Errorf("frames of %d bytes moved the stack growStack grew", callStack-4<<10)
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
