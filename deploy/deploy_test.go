package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/elasticsearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/opensearch"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// nonRootUID is the image's USER and what every deployment runs it as.
const nonRootUID = 65532

// registry mirrors the engines compiled into the binary.
func registry() *adapters.Registry {
	return adapters.NewRegistry(memory.Factory, elasticsearch.Factory, opensearch.Factory, qdrant.Factory)
}

// repoRoot is the module root: this file lives in <root>/deploy.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Dir(filepath.Dir(file))
}

func readFile(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// yamlDocs decodes every document of a (multi-document) YAML file.
func yamlDocs(t *testing.T, rel string) []map[string]any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(readFile(t, rel)))
	var docs []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		docs = append(docs, d)
	}
}

// clearRCPEnv unsets every RCP_* variable for the test, so that `${VAR:-x}`
// defaults and RCP_* overrides resolve the same way on every machine.
func clearRCPEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, config.EnvPrefix+"_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

// Accessors over decoded YAML: a wrong shape yields the zero value, and
// the assertion that uses it fails.

func m(v any) map[string]any { x, _ := v.(map[string]any); return x }

func s(v any) []any { x, _ := v.([]any); return x }

// str renders a scalar ("" for an absent value).
func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func strs(v any) []string {
	var out []string
	for _, x := range s(v) {
		out = append(out, str(x))
	}
	return out
}
