package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeIdentityExamples runs `config check` on each configuration
// of the Identity section of docs/access.md (the yaml blocks marked
// "# identity example: <name>") and on a broken copy of each, which it
// must refuse.
func TestReadmeIdentityExamples(t *testing.T) {
	examples := map[string]string{}
	for _, block := range strings.Split(docsText(t), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if name, ok := strings.CutPrefix(strings.SplitN(block, "\n", 2)[0], "# identity example: "); ok {
			examples[name] = block
		}
	}
	breakages := map[string][2]string{
		"amazon-opensearch": {"service: aoss}", "service: es}"},
		"oidc":              {"algorithms: [RS256, ES256]", "algorithms: [RS256, HS256]"},
		"mcp-oauth":         {"resource: https://search.example.com/mcp", "resource: http://search.example.com/mcp"},
	}
	t.Setenv("RCP_INGEST_KEY", "ingest-key-0123456789")
	for name, br := range breakages {
		block, ok := examples[name]
		if !ok {
			t.Fatalf("docs have no identity example %q (found %d)", name, len(examples))
		}
		t.Run(name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "c.yaml")
			writeFile(t, cfg, block)
			if _, stderr, err := run(t, "", "config", "check", "--config", cfg); err != nil {
				t.Fatalf("config check refused the documented example: %v\n%s", err, stderr)
			}
			if !strings.Contains(block, br[0]) {
				t.Fatalf("example lacks %q", br[0])
			}
			writeFile(t, cfg, strings.Replace(block, br[0], br[1], 1))
			if _, _, err := run(t, "", "config", "check", "--config", cfg); err == nil {
				t.Fatalf("config check accepted the example with %q", br[1])
			}
		})
	}
}
