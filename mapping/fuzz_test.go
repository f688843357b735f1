package mapping

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzRead feeds hostile _mapping and collection-info bodies to the
// readers (seeded with every recorded response): they return an error or
// a consistent model, never panic. Consistent: merged fields are unique
// and in path order, every conflict has two or more definitions and is
// not also a merged field, and every index field has a path and a type.
func FuzzRead(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*-*", "*.json"))
	for _, s := range seeds {
		if strings.HasSuffix(s, ".golden.json") {
			continue
		}
		if raw, err := os.ReadFile(s); err == nil {
			f.Add(raw)
		}
	}
	f.Add([]byte(`{"i":{"mappings":{"properties":{"a":{"properties":{"b":{"type":"nested","properties":{"c":{"type":"text","fields":{"k":{"type":"keyword"}}}}}}}}}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, read := range []func([]byte) (*Mapping, error){Read, func(b []byte) (*Mapping, error) { return ReadQdrant("c", b) }} {
			m, err := read(raw)
			if err != nil {
				continue
			}
			check(t, m)
		}
	})
}

func check(t *testing.T, m *Mapping) {
	t.Helper()
	var paths []string
	for _, f := range m.Fields {
		paths = append(paths, f.Path)
	}
	if !slices.IsSorted(paths) || len(slices.Compact(slices.Clone(paths))) != len(paths) {
		t.Fatalf("merged fields not unique and sorted: %q", paths)
	}
	for _, c := range m.Conflicts {
		if len(c.Groups) < 2 {
			t.Fatalf("conflict %q has %d definitions", c.Path, len(c.Groups))
		}
		if _, found := slices.BinarySearch(paths, c.Path); found {
			t.Fatalf("conflict %q is also a merged field", c.Path)
		}
	}
	for _, ix := range m.Indices {
		for _, f := range ix.Fields {
			if f.Type == "" {
				t.Fatalf("index %q field %q has no type", ix.Name, f.Path)
			}
		}
	}
}
