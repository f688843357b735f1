// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package mcp

import (
	"context"
	"testing"
)

// TestLogEnabledFollowsLevels checks ServerSession.LogEnabled against the
// order of the specification's levels, and against what Log sends: no
// message before the client sets a level, a message at or above the
// session's level after, and a request's own level over the session's.
func TestLogEnabledFollowsLevels(t *testing.T) {
	levels := []LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
	ctx := context.Background()
	s := NewServer(testImpl, nil)
	_, st := NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	var sent []LoggingLevel
	s.AddSendingMiddleware(func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, method string, req Request) (Result, error) {
			if method == notificationLoggingMessage {
				sent = append(sent, req.GetParams().(*LoggingMessageParams).Level)
				return nil, nil
			}
			return next(ctx, method, req)
		}
	})
	check := func(what string, ctx context.Context, min int) {
		t.Helper()
		for i, l := range levels {
			want := min >= 0 && i >= min
			if got := ss.LogEnabled(ctx, l); got != want {
				t.Errorf("%s: LogEnabled(%s) = %v, want %v", what, l, got, want)
			}
			sent = sent[:0]
			if err := ss.Log(ctx, &LoggingMessageParams{Level: l, Data: "x"}); err != nil {
				t.Fatal(err)
			}
			if got := len(sent) == 1; got != want {
				t.Errorf("%s: Log(%s) sent %v, want %v", what, l, got, want)
			}
		}
	}
	check("no level set", ctx, -1)
	for i, sl := range levels {
		ss.mu.Lock()
		ss.state.LogLevel = sl
		ss.mu.Unlock()
		check("session at "+string(sl), ctx, i)
		// A request's own level (protocol 2026-07-28) wins over the session's.
		for j, rl := range levels {
			check("session at "+string(sl)+", request at "+string(rl), context.WithValue(ctx, logLevelContextKey{}, rl), j)
		}
	}
}
