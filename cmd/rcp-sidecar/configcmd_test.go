package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar"
)

// TestConfigCheckPrintsTheFileForm runs `config check` on
// config.example.yaml and checks that the printed form reads like the
// file: every key snake_case (no Go field names such as Corpus or K1) and
// every time.Duration of the loaded configuration, engine settings
// included, printed as a duration string, never as bare nanoseconds.
func TestConfigCheckPrintsTheFileForm(t *testing.T) {
	// From the repository root, where the example's relative paths point.
	t.Chdir(filepath.Join("..", ".."))
	out, stderr, err := run(t, "", "config", "check", "--config", "config.example.yaml")
	if err != nil {
		t.Fatalf("config check: %v\n%s", err, stderr)
	}
	var printed any
	if err := json.Unmarshal([]byte(out), &printed); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	var numbers []float64
	strs := map[string]bool{}
	walkJSON(printed, "", func(path, key string, v any) {
		if key != "" && !snake.MatchString(key) {
			t.Errorf("%s: key %q is not snake_case", path, key)
		}
		switch v := v.(type) {
		case float64:
			numbers = append(numbers, v)
		case string:
			strs[v] = true
		}
	})

	cfg, err := config.Load("config.example.yaml", sidecar.Registry())
	if err != nil {
		t.Fatal(err)
	}
	durations := collectDurations(reflect.ValueOf(cfg))
	if len(durations) < 10 {
		t.Fatalf("found only %d durations in the example config: the walk is broken", len(durations))
	}
	for _, d := range durations {
		for _, n := range numbers {
			if n == float64(d) {
				t.Errorf("duration %v printed as bare nanoseconds %v", d, n)
			}
		}
		if !strs[d.String()] {
			t.Errorf("duration %v not printed as %q", d, d.String())
		}
	}
	server := printed.(map[string]any)["server"].(map[string]any)
	if server["shutdown_grace"] != "10s" {
		t.Errorf("server.shutdown_grace printed as %v, want \"10s\"", server["shutdown_grace"])
	}
	notes := printed.(map[string]any)["backends"].([]any)[0].(map[string]any)["settings"].(map[string]any)
	if notes["k1"] != 1.2 || notes["corpus"] == nil {
		t.Errorf("memory settings printed as %v, want keys k1 and corpus", notes)
	}
}

// walkJSON calls fn for every value under v with its path and, for
// object members, its key.
func walkJSON(v any, path string, fn func(path, key string, v any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			fn(path+"."+k, k, e)
			walkJSON(e, path+"."+k, fn)
		}
	case []any:
		for i, e := range v {
			fn(path, "", e)
			walkJSON(e, path+"["+strconv.Itoa(i)+"]", fn)
		}
	}
}

// collectDurations returns every non-zero time.Duration reachable from v.
func collectDurations(v reflect.Value) []time.Duration {
	var out []time.Duration
	switch {
	case !v.IsValid():
	case v.Type() == reflect.TypeFor[time.Duration]():
		if d := time.Duration(v.Int()); d != 0 {
			out = append(out, d)
		}
	case v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface:
		if !v.IsNil() {
			out = collectDurations(v.Elem())
		}
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out = append(out, collectDurations(v.Field(i))...)
			}
		}
	case v.Kind() == reflect.Slice || v.Kind() == reflect.Array:
		for i := range v.Len() {
			out = append(out, collectDurations(v.Index(i))...)
		}
	case v.Kind() == reflect.Map:
		for it := v.MapRange(); it.Next(); {
			out = append(out, collectDurations(it.Value())...)
		}
	}
	return out
}

// TestConfigCheckShowsResilienceDefaults: config check prints the
// resilience values serve applies — the ones set, and the defaults of
// adapters/resilient for the rest — not an empty block.
func TestConfigCheckShowsResilienceDefaults(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.jsonl")
	writeFile(t, corpus, `{"_id":"a","text":"x"}`+"\n")
	cfg := filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, "backends:\n  - {name: docs, engine: memory, settings: {corpus: "+corpus+"}, resilience: {timeout: 2s, retries: 0}}\n")
	out, _, err := run(t, "", "config", "check", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Backends []struct {
			Resilience map[string]any `json:"resilience"`
		} `json:"backends"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Backends) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	r := got.Backends[0].Resilience
	want := map[string]any{"timeout": "2s", "retries": float64(0), "write_timeout": resilient.DefaultWriteTimeout.String(),
		"breaker_failures": float64(resilient.DefaultFailureThreshold), "reprobe_interval": resilient.DefaultReprobeInterval.String()}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("resilience.%s = %v, want %v (%v)", k, r[k], v, r)
		}
	}
}
