package resilient

import (
	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	retrypkg "github.com/rcp-sidecar/rcp-sidecar/retry"
)

// Breaker states as reported by State.
const (
	StateClosed   = retrypkg.StateClosed
	StateOpen     = retrypkg.StateOpen
	StateHalfOpen = retrypkg.StateHalfOpen
)

// callGroup is the breaker group of ctx's call: its request's
// adapters.CallGroup (the stages of a hybrid retrieve succeed or fail as a
// unit), or nil for a lone call. A nil *CallGroup must not become a
// non-nil interface value, or every lone call would join a lone trial.
func callGroup(g *adapters.CallGroup) any {
	if g == nil {
		return nil
	}
	return g
}
