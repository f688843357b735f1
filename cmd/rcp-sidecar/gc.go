package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the garbage collector's target when GOGC is not
// set. The sidecar's live heap is small (a few MB: capabilities, the
// mapping, telemetry) while each request allocates its decoded engine
// answer and encoded RCP answer, so with Go's default of 100 the
// collector runs every few dozen requests and costs about a tenth of the
// CPU per query. At 400 it runs a quarter as often, and the heap may grow
// to five times the live heap between collections (about 12 MB more at
// the usual size; more with a large live session store): GOGC and
// GOMEMLIMIT in the environment still win, and docs/benchmarks.md says when to
// set them.
const defaultGCPercent = 400

// tuneGC applies defaultGCPercent unless GOGC is set (lookup reads the
// environment), and reports whether it did.
func tuneGC(lookup func(string) (string, bool)) bool {
	if _, set := lookup("GOGC"); set {
		return false
	}
	debug.SetGCPercent(defaultGCPercent)
	return true
}

func init() { tuneGC(os.LookupEnv) }
