package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the garbage collector's target when GOGC is not
// set. The sidecar's live heap is small (a few MB: capabilities, the
// mapping, telemetry) while each request allocates its decoded engine
// answer and encoded RCP answer, so with Go's default of 100 the
// collector runs every few dozen requests and costs about a sixth of the
// CPU per query. At 400 it runs a quarter as often for about 12 MB more
// heap at most; GOGC and GOMEMLIMIT in the environment still win.
const defaultGCPercent = 400

// tuneGC applies defaultGCPercent unless GOGC is set (lookup reads the
// environment). It returns the percent in force.
func tuneGC(lookup func(string) (string, bool)) int {
	if _, set := lookup("GOGC"); set {
		p := debug.SetGCPercent(100) // read the runtime's value back
		debug.SetGCPercent(p)
		return p
	}
	debug.SetGCPercent(defaultGCPercent)
	return defaultGCPercent
}

func init() { tuneGC(os.LookupEnv) }
