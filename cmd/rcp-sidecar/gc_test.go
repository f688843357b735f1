package main

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	unset := func(string) (string, bool) { return "", false }
	if got := tuneGC(unset); got != defaultGCPercent {
		t.Fatalf("GOGC unset: percent %d, want %d", got, defaultGCPercent)
	}
	if got := debug.SetGCPercent(defaultGCPercent); got != defaultGCPercent {
		t.Fatalf("GOGC unset: runtime percent %d, want %d", got, defaultGCPercent)
	}
	// With GOGC set the runtime's own value (from the environment at
	// start-up) stays: here whatever the test process runs with.
	debug.SetGCPercent(150)
	set := func(k string) (string, bool) { return "150", k == "GOGC" }
	if got := tuneGC(set); got != 150 {
		t.Fatalf("GOGC set: percent %d, want the runtime's 150", got)
	}
}
