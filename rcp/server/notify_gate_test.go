package server

import (
	"encoding/json"
	"testing"
)

// The gates answer exactly what Progress and Log would do, so a backend
// that skips work on a false answer loses nothing a client could see.
func TestReporterGates(t *testing.T) {
	for _, tc := range []struct {
		name          string
		r             *reporter
		progress      bool
		debug, errLog bool
	}{
		{"nothing asked", &reporter{logMin: -1}, false, false, false},
		{"progress token", &reporter{logMin: -1, token: json.RawMessage(`1`)}, true, false, false},
		{"log at warning", &reporter{logMin: logLevels["warning"]}, false, false, true},
		{"log at debug", &reporter{logMin: logLevels["debug"]}, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent int
			tc.r.emit = func([]byte) { sent++ }
			if got := tc.r.ProgressEnabled(); got != tc.progress {
				t.Errorf("ProgressEnabled = %v, want %v", got, tc.progress)
			}
			if got := tc.r.LogEnabled("debug"); got != tc.debug {
				t.Errorf("LogEnabled(debug) = %v, want %v", got, tc.debug)
			}
			if got := tc.r.LogEnabled("error"); got != tc.errLog {
				t.Errorf("LogEnabled(error) = %v, want %v", got, tc.errLog)
			}
			want := 0
			for _, on := range []bool{tc.progress, tc.debug} {
				if on {
					want++
				}
			}
			tc.r.Progress("recall", 0.5, "", nil)
			tc.r.Log("debug", "", "x", nil)
			if sent != want {
				t.Errorf("sent %d frames, gates promised %d", sent, want)
			}
		})
	}
}
