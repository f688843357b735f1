package anyreplica

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// Access keys of the replica tests (the configuration holds them in the
// environment).
const (
	acmeKey   = "acme-replica-key-000000"
	globexKey = "globex-replica-key-0000"
)

// keyEnv is the environment every replica of a test shares: the API keys
// and one cursor key.
func keyEnv(cursorKey string) []string {
	return []string{"TEST_ACME_KEY=" + acmeKey, "TEST_GLOBEX_KEY=" + globexKey, "TEST_CURSOR_KEY=" + cursorKey}
}

func randomHexKey(t *testing.T) string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// replicaConfig is a memory backend over corpus, two API keys (one per
// tenant) and, when withCursorKeys, server.cursor_keys from the
// environment.
func replicaConfig(corpus string, withCursorKeys bool) string {
	return configFor(fmt.Sprintf("{name: docs, engine: memory, settings: {corpus: %q}, policy: {max_k: 100}}", corpus), withCursorKeys)
}

// configFor is replicaConfig over another backend (a YAML flow mapping).
func configFor(backend string, withCursorKeys bool) string {
	s := `backends:
  - ` + backend + `
access:
  keys:
    - {id: acme, env: TEST_ACME_KEY, filter: {field: tenant, op: eq, value: acme}}
    - {id: globex, env: TEST_GLOBEX_KEY, filter: {field: tenant, op: eq, value: globex}}
`
	if withCursorKeys {
		s += "server:\n  cursor_keys:\n    - {env: TEST_CURSOR_KEY}\n"
	}
	return s
}

type page struct {
	Hits []struct {
		ID string `json:"id"`
	} `json:"hits"`
	NextCursor   string `json:"nextCursor"`
	IndexVersion string `json:"indexVersion"`
}

func (p page) ids() []string {
	out := make([]string, len(p.Hits))
	for i, h := range p.Hits {
		out[i] = h.ID
	}
	return out
}

func retrievePage(t *testing.T, r *replica, key string, params map[string]any) page {
	t.Helper()
	rep := rcpCall(t, r, key, "retrieve", params)
	if rep.Error != nil {
		t.Fatalf("retrieve %v on %s: %d %s", params, r.addr, rep.Error.Code, rep.Error.Message)
	}
	var p page
	if err := json.Unmarshal(rep.Result, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCursorOpensOnEveryReplica: with server.cursor_keys, pages fetched
// from two replicas in turn equal one call; a cursor stays bound to the
// API key it was issued to; it still opens after its replica restarts.
// A replica without the keys refuses it, and says at start that its
// cursors stay with the process.
func TestCursorOpensOnEveryReplica(t *testing.T) {
	bin := itest.BuildSidecar(t, t.TempDir())
	dir := t.TempDir()
	corpus := writeCorpus(t, dir, 25, 60)
	cfg := writeFile(t, dir, "replicas.yaml", replicaConfig(corpus, true))
	env := keyEnv(randomHexKey(t))
	a, b := start(t, bin, cfg, env...), start(t, bin, cfg, env...)
	for _, r := range []*replica{a, b} {
		if !strings.Contains(r.Stderr(), "cursor keys from server.cursor_keys") {
			t.Fatalf("replica %s does not say where its cursor keys come from:\n%s", r.addr, r.Stderr())
		}
	}

	const k = 4
	whole := retrievePage(t, a, acmeKey, map[string]any{"query": "solar", "k": 100, "mode": "sparse"}).ids()
	if len(whole) < 3*k {
		t.Fatalf("acme has %d documents; the test needs %d", len(whole), 3*k)
	}
	var paged []string
	var cursors []string
	cursor := ""
	for i := 0; len(paged) < len(whole); i++ {
		r := []*replica{a, b}[i%2]
		params := map[string]any{"query": "solar", "k": k, "mode": "sparse"}
		if cursor != "" {
			params["cursor"] = cursor
		}
		p := retrievePage(t, r, acmeKey, params)
		if len(p.Hits) == 0 {
			t.Fatalf("page %d on %s is empty after %d of %d hits", i, r.addr, len(paged), len(whole))
		}
		paged = append(paged, p.ids()...)
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
		cursors = append(cursors, cursor)
	}
	if !slices.Equal(paged, whole) {
		t.Fatalf("pages across replicas:\n%v\nwant one call's:\n%v", paged, whole)
	}

	second := map[string]any{"query": "solar", "k": k, "mode": "sparse", "cursor": cursors[0]}
	if rep := rcpCall(t, b, globexKey, "retrieve", second); rep.Error == nil || rep.Error.Code != -32602 || rep.Error.Data.Field != "cursor" {
		t.Fatalf("acme's cursor under globex's key on another replica: %+v", rep.Error)
	}

	want := retrievePage(t, b, acmeKey, second).ids()
	a.Stop()
	a = start(t, bin, cfg, env...)
	if got := retrievePage(t, a, acmeKey, second).ids(); !slices.Equal(got, want) {
		t.Fatalf("page 2 after a restart: %v, want %v", got, want)
	}

	lone := start(t, bin, writeFile(t, dir, "lone.yaml", replicaConfig(corpus, false)), env...)
	if n := strings.Count(lone.Stderr(), "no server.cursor_keys"); n != 1 {
		t.Fatalf("a replica without cursor keys said so %d times:\n%s", n, lone.Stderr())
	}
	if rep := rcpCall(t, lone, acmeKey, "retrieve", second); rep.Error == nil || rep.Error.Code != -32602 || rep.Error.Data.Field != "cursor" {
		t.Fatalf("a replica with a key of its own opened another's cursor: %+v", rep.Error)
	}
}
