package mapping

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden models in testdata")

// TestGolden reads every _mapping response recorded from a real engine
// (testdata/<engine>-<version>/<index>.json, written by
// integration/mapping/record.sh) and compares the model with
// <index>.golden.json. go test ./mapping -run TestGolden -update rewrites
// the golden files after a reviewed change.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*-*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range inputs {
		if strings.HasSuffix(in, ".golden.json") || strings.HasSuffix(in, ".settings.json") {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(in, ".json"), func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var m any
			if strings.HasPrefix(filepath.Base(filepath.Dir(in)), "qdrant-") {
				m, err = ReadQdrant(strings.TrimSuffix(filepath.Base(in), ".json"), raw)
			} else {
				m, err = Read(raw)
			}
			if err != nil {
				t.Fatalf("read %s: %v", in, err)
			}
			got, err := json.MarshalIndent(m, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(in, ".json") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./mapping -run TestGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("model of %s differs from %s:\n%s", in, golden, got)
			}
		})
	}
	// Every engine version CI runs has recordings.
	for _, dir := range []string{"elasticsearch-8.19.21", "elasticsearch-9.2.0", "elasticsearch-7.17.29",
		"opensearch-3.5.0", "opensearch-2.19.1", "qdrant-1.17.0"} {
		if _, err := os.Stat(filepath.Join("testdata", dir)); err != nil {
			t.Errorf("no recordings for %s: %v", dir, err)
		}
	}
	if n == 0 {
		t.Fatal("no recorded mappings in testdata")
	}
}
