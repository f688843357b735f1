package itest

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// Engine is a live engine of the Elasticsearch family: its name as the
// configuration names it, and its base URL.
type Engine struct {
	Name, URL string
}

// SearchEngines returns Elasticsearch (required: RequireEnv) and
// OpenSearch when RCP_OS_URL is set.
func SearchEngines(t testing.TB) []Engine {
	t.Helper()
	out := []Engine{{"elasticsearch", RequireEnv(t, "RCP_ES_URL", "run integration/elasticsearch/start.sh and source integration/.work/elasticsearch.env")}}
	if u := os.Getenv("RCP_OS_URL"); u != "" {
		out = append(out, Engine{"opensearch", u})
	} else {
		t.Log("RCP_OS_URL is unset: OpenSearch cases skipped")
	}
	return out
}

// EngineDo sends a raw JSON request to an engine (test setup and checks)
// and returns its status and body.
func EngineDo(t testing.TB, base, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// UniqueName is prefix plus a random suffix, lower-case: an index or
// collection name no other test run uses.
func UniqueName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// CreateIndex creates index name on the engine at base with body and
// deletes it (and the indices matching the cleanup patterns) when the test
// ends.
func CreateIndex(t testing.TB, base, name, body string, cleanup ...string) {
	t.Helper()
	if st, out := EngineDo(t, base, http.MethodPut, "/"+name, body); st/100 != 2 {
		t.Fatalf("create %s: HTTP %d %s", name, st, out)
	}
	t.Cleanup(func() {
		for _, n := range append([]string{name}, cleanup...) {
			EngineDo(t, base, http.MethodDelete, "/"+n+"?expand_wildcards=all", "")
		}
	})
}
