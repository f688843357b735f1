package main

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	unset := func(string) (string, bool) { return "", false }
	if !tuneGC(unset) {
		t.Fatal("GOGC unset: not tuned")
	}
	if got := debug.SetGCPercent(defaultGCPercent); got != defaultGCPercent {
		t.Fatalf("GOGC unset: runtime percent %d, want %d", got, defaultGCPercent)
	}
	// With GOGC set the runtime's own value (from the environment at
	// start-up) stays.
	debug.SetGCPercent(150)
	set := func(k string) (string, bool) { return "150", k == "GOGC" }
	if tuneGC(set) {
		t.Fatal("GOGC set: tuned anyway")
	}
	if got := debug.SetGCPercent(150); got != 150 {
		t.Fatalf("GOGC set: runtime percent %d, want 150", got)
	}
}
