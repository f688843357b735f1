package config

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"Corpus": "corpus", "K1": "k1", "PITKeepAlive": "pit_keep_alive", "CAFile": "ca_file",
		"MaxK": "max_k", "URLs": "urls", "EfSearch": "ef_search", "HTTP": "http", "IDPrefix": "id_prefix",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// engineSettings stands for an engine Config written without json tags:
// keys come from mapstructure, else from the field name.
type engineSettings struct {
	Corpus   string `mapstructure:"corpus"`
	K1       float64
	Wait     time.Duration `mapstructure:"wait"`
	Every    *time.Duration
	Password Secret `mapstructure:"password"`
	Skipped  string `json:"-"`
	Empty    string `json:",omitempty"`
	hidden   int
}

func (*engineSettings) Validate() error { return nil }

func TestMarshalPrintsDurationsAndSnakeCase(t *testing.T) {
	every := 90 * time.Second
	cfg := Config{
		Server: Server{Deadline: 3 * time.Second, ShutdownGrace: 10 * time.Second},
		Backends: []Backend{{Name: "a", Resilience: Resilience{Timeout: 5 * time.Second},
			Config: &engineSettings{Corpus: "c.jsonl", K1: 1.2, Wait: time.Minute, Every: &every, Password: "hunter2", Skipped: "x", hidden: 1}}},
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(string(out)) // json.Marshal escapes HTML
	for _, want := range []string{`"deadline":"3s"`, `"shutdown_grace":"10s"`, `"timeout":"5s"`,
		`"settings":{"corpus":"c.jsonl","k1":1.2,"wait":"1m0s","every":"1m30s","password":"<secret>"}`} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s in\n%s", want, s)
		}
	}
	for _, bad := range []string{"10000000000", "hunter2", "Skipped", "hidden", "Empty"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s printed in\n%s", bad, s)
		}
	}
}
