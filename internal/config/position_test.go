package config_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// TestErrorPositions: an error about a key or token of the file names its
// line and column and quotes the line — a mis-indent where the offending
// key is, not where its mapping starts; unknown keys and values of the
// wrong type where they are written, in the top level and in an engine's
// settings — and never quotes a credential.
func TestErrorPositions(t *testing.T) {
	t.Setenv("RCP_TEST_SURELY_UNSET_VAR", "")
	backend := "backends:\n  - name: docs\n    engine: fake\n    settings: {url: \"http://x:1\"}\n"
	tests := []struct {
		name       string
		yaml       string
		line, col  int
		msg        string // substring of the message
		source     string // the line quoted, exactly
		notInError string // "" or text that must not appear
	}{
		{"mis-indent", "server:\n  http:\n    listen: \"127.0.0.1:8080\"\n   base_path: /x\n" + backend,
			4, 4, "parse yaml", "   base_path: /x", ""},
		{"tab indent", "server:\n\thttp: {}\n" + backend, 2, 1, "parse yaml", "\thttp: {}", ""},
		{"unclosed flow", "backends: [\n", 1, 11, "parse yaml", "backends: [", ""},
		{"unknown top key", "server: {}\nbackend: []\n" + backend, 2, 1, `unknown key "backend"`, "backend: []", ""},
		{"unknown nested key", "server:\n  http:\n    listen_adress: x\n" + backend, 3, 5,
			`unknown key "server.http.listen_adress"`, "    listen_adress: x", ""},
		{"unknown settings key", "backends:\n  - name: docs\n    engine: fake\n    settings: {url: \"http://x:1\", tls: {insecur: true}}\n",
			4, 41, `unknown key "backends[0].settings.tls.insecur"`, "    settings: {url: \"http://x:1\", tls: {insecur: true}}", ""},
		{"retired key", "server:\n  mcp:\n    max_sessions: 3\n" + backend, 3, 5, "server.mcp.max_sessions: removed", "    max_sessions: 3", ""},
		{"duration type", "server:\n  deadline: ten seconds\n" + backend, 2, 3, "server.deadline: time: invalid duration", "  deadline: ten seconds", ""},
		{"int type", backend + "    policy:\n      max_k: lots\n", 6, 7, "backends[0].policy.max_k:", "      max_k: lots", ""},
		{"settings type", "backends:\n  - name: docs\n    engine: fake\n    settings:\n      url: \"http://x:1\"\n      tls: {insecure: maybe}\n",
			6, 13, "backends[0].settings.tls.insecure:", "      tls: {insecure: maybe}", ""},
		{"validation", "server:\n  http:\n    listen: nowhere\n" + backend, 3, 5, `server.http.listen: "nowhere" is not host:port`, "    listen: nowhere", ""},
		{"unset variable", "backends:\n  - name: docs\n    engine: fake\n    settings:\n      url: ${RCP_TEST_SURELY_UNSET_VAR}\n",
			5, 7, "environment variable RCP_TEST_SURELY_UNSET_VAR is not set", "      url: ${RCP_TEST_SURELY_UNSET_VAR}", ""},
		{"missing key: its item", "backends:\n  - engine: fake\n    settings: {url: \"http://x:1\"}\n", 2, 5, "backends[0].name: required",
			"  - engine: fake", ""},
		{"password masked", "backends:\n  - name: docs\n    engine: fake\n    settings:\n      url: \"http://x:1\"\n     password: hunter2\n",
			6, 6, "parse yaml", "     password: <secret>", "hunter2"},
		{"cursor key masked", "server:\n  cursor_keys:\n    - value: \"0123456789abcdef0123\"\n" + backend, 3, 7,
			"server.cursor_keys[0]: the key is 20 hex digits", "    - value: <secret>", "0123456789abcdef"},
		{"access key hash masked", "access:\n  keys:\n    - id: a\n      hash: \"sha256:00\"\n      filter: 3\n" + backend, 5, 7,
			"access.keys[0].filter", "      filter: <secret>", ""},
		{"mis-indent under a key", "server:\n  cursor_keys:\n    - env: K\n     value: \"" + strings.Repeat("ab", 32) + "\"\n" + backend, 4, 6,
			"parse yaml", "     value: <secret>", "abababab"},
		{"api key masked", "embedder:\n  url: http://e:1\n  model: m\n  api_key: [sk-live-123]\n" + backend, 4, 3, "embedder.api_key",
			"  api_key: <secret>", "sk-live-123"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.yaml), registry)
			var e *config.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not located (want line %d)", err, tt.line)
			}
			if e.Line != tt.line || e.Column != tt.col || e.Source != tt.source || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("got line %d column %d source %q: %v\nwant line %d column %d source %q message with %q",
					e.Line, e.Column, e.Source, err, tt.line, tt.col, tt.source, tt.msg)
			}
			if tt.notInError != "" && strings.Contains(err.Error(), tt.notInError) {
				t.Errorf("the error quotes %q: %v", tt.notInError, err)
			}
		})
	}
}

// TestErrorPositionFile: Load names the file, the line and the column the
// way editors and terminals link them, then shows the line with a caret.
func TestErrorPositionFile(t *testing.T) {
	path := t.TempDir() + "/bad.yaml"
	if err := os.WriteFile(path, []byte("server:\n  http:\n    listen: \"127.0.0.1:8080\"\n   base_path: /x\nbackends: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(path, registry)
	want := "config " + path + ":4:4: parse yaml: value is not allowed in this context\n  4 |    base_path: /x\n    |    ^"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

// TestErrorsWithoutPosition: an error about no key written in the file
// is returned as before, unlocated.
func TestErrorsWithoutPosition(t *testing.T) {
	_, err := config.Parse([]byte("server: {}\n"), registry)
	var e *config.Error
	if err == nil || errors.As(err, &e) || !strings.Contains(err.Error(), "at least one backend") {
		t.Errorf("error = %v (located: %v), want the unlocated backends error", err, e != nil)
	}
}

// FuzzErrorPosition: whatever the file, Parse does not panic, and a
// located error points inside the file and quotes that line.
func FuzzErrorPosition(f *testing.F) {
	f.Add("server:\n  http:\n    listen: \"127.0.0.1:8080\"\n   base_path: /x\nbackends: []\n")
	f.Add("backends: [\n")
	f.Add("server:\n  cursor_keys:\n    - env: K\n     value: x\n")
	f.Add("a: &x {b: 1}\nc: *x\nbackends:\n  - {name: d, engine: fake, settings: {url: 3}}\n")
	f.Fuzz(func(t *testing.T, y string) {
		_, err := config.Parse([]byte(y), registry)
		var e *config.Error
		if !errors.As(err, &e) {
			return
		}
		lines := strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(y), "\n") // YAML's line breaks
		if e.Line < 1 || e.Line > len(lines) || e.Column < 0 {
			t.Fatalf("error at line %d column %d of a %d-line file: %v", e.Line, e.Column, len(lines), err)
		}
	})
}
