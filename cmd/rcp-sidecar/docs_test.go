package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docsText returns the user documentation a test checks examples from:
// README.md followed by every docs/*.md page, so a test finds a section
// wherever it lives.
func docsText(t *testing.T) string {
	t.Helper()
	root := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(text)
		b.WriteString("\n")
	}
	return b.String()
}
