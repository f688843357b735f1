// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package mcp

import (
	"bytes"
	"fmt"
	"math/rand"
	"net/http/httptest"
	"testing"
)

// releaseEvent is writeEventUnflushed as released: the event formatted
// into a fresh buffer.
func releaseEvent(evt Event) []byte {
	var b bytes.Buffer
	if evt.Name != "" {
		fmt.Fprintf(&b, "event: %s\n", evt.Name)
	}
	if evt.ID != "" {
		fmt.Fprintf(&b, "id: %s\n", evt.ID)
	}
	if evt.Retry != "" {
		fmt.Fprintf(&b, "retry: %s\n", evt.Retry)
	}
	b.WriteString("data: ")
	b.Write(evt.Data)
	b.WriteString("\n\n")
	return b.Bytes()
}

// TestWriteEventMatchesRelease checks that events assembled in pooled
// buffers are written byte for byte as the release formatted them, one
// after another in varied sizes (a reused buffer longer or shorter than
// the event), above the size whose buffer is not kept too.
func TestWriteEventMatchesRelease(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	field := func() string {
		if rng.Intn(3) == 0 {
			return ""
		}
		return fmt.Sprint(rng.Intn(1000))
	}
	for i := range 2000 {
		n := rng.Intn(1 << uint(rng.Intn(19)))
		if i%500 == 0 {
			n = maxPooledEvent + rng.Intn(1024)
		}
		data := make([]byte, n)
		for j := range data {
			data[j] = byte('a' + rng.Intn(26))
		}
		evt := Event{Name: field(), ID: field(), Retry: field(), Data: data}
		w := httptest.NewRecorder()
		if _, err := writeEventUnflushed(w, evt); err != nil {
			t.Fatal(err)
		}
		if want := releaseEvent(evt); !bytes.Equal(w.Body.Bytes(), want) {
			t.Fatalf("event %d (%d bytes of data): wrote %q, want %q", i, n, w.Body.Bytes(), want)
		}
	}
}
