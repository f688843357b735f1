package anyreplica

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// TestIndexVersionOpensOnEveryReplica: a pinned indexVersion (an
// Elasticsearch point in time) issued by one replica pins the same
// snapshot on another: the pages fetched there under it equal the ones
// the issuing replica serves, and a replica without the shared keys
// refuses the token.
func TestIndexVersionOpensOnEveryReplica(t *testing.T) {
	es := itest.RequireEnv(t, "RCP_ES_URL", "start integration/elasticsearch/start.sh and source integration/.work/elasticsearch.env")
	bin := itest.BuildSidecar(t, t.TempDir())
	dir := t.TempDir()
	corpus := writeCorpus(t, dir, 41, 40)
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	index := "anyreplica-" + hex.EncodeToString(suffix[:])
	esDo(t, es, http.MethodPut, "/"+index, "application/json",
		`{"settings":{"number_of_shards":1,"number_of_replicas":0},"mappings":{"properties":{"text":{"type":"text"},"topic":{"type":"keyword"},"tenant":{"type":"keyword"}}}}`)
	t.Cleanup(func() { esDo(t, es, http.MethodDelete, "/"+index, "", "") })
	raw, err := os.ReadFile(corpus)
	if err != nil {
		t.Fatal(err)
	}
	var bulk bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var d doc
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		src, _ := json.Marshal(map[string]any{"text": d.Text, "topic": d.Topic, "tenant": d.Tenant})
		fmt.Fprintf(&bulk, "{\"index\":{\"_id\":%q}}\n%s\n", d.ID, src)
	}
	esDo(t, es, http.MethodPost, "/"+index+"/_bulk?refresh=true", "application/x-ndjson", bulk.String())

	backend := fmt.Sprintf("{name: docs, engine: elasticsearch, settings: {urls: [%q], index: %s, pit: true}, policy: {max_k: 100}}", es, index)
	cfg := writeFile(t, dir, "es.yaml", configFor(backend, true))
	env := keyEnv(randomHexKey(t))
	a, b := start(t, bin, cfg, env...), start(t, bin, cfg, env...)

	q := map[string]any{"query": "solar", "k": 4, "mode": "sparse"}
	first := retrievePage(t, a, acmeKey, q)
	if first.IndexVersion == "" || first.NextCursor == "" {
		t.Fatalf("page 1 has indexVersion %q and cursor %q; want both (pit: true)", first.IndexVersion, first.NextCursor)
	}
	pinned := map[string]any{"query": "solar", "k": 4, "mode": "sparse", "indexVersion": first.IndexVersion}
	if got := retrievePage(t, b, acmeKey, pinned).ids(); !slices.Equal(got, first.ids()) {
		t.Fatalf("page 1 pinned on the other replica: %v, want %v", got, first.ids())
	}
	pinned["cursor"] = first.NextCursor
	want := retrievePage(t, a, acmeKey, pinned).ids()
	if got := retrievePage(t, b, acmeKey, pinned).ids(); !slices.Equal(got, want) || len(got) == 0 {
		t.Fatalf("page 2 under the pinned snapshot on the other replica: %v, want %v", got, want)
	}

	lone := start(t, bin, writeFile(t, dir, "lone.yaml", configFor(backend, false)), env...)
	delete(pinned, "cursor")
	if rep := rcpCall(t, lone, acmeKey, "retrieve", pinned); rep.Error == nil || rep.Error.Code != -32602 || rep.Error.Data.Field != "indexVersion" {
		t.Fatalf("a replica with a key of its own pinned another's snapshot: %+v", rep.Error)
	}
}

// esDo sends one request to Elasticsearch and fails the test unless it
// succeeds.
func esDo(t *testing.T, es, method, path, ctype, body string) {
	t.Helper()
	req, _ := http.NewRequest(method, es+path, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || bytes.Contains(b, []byte(`"errors":true`)) {
		t.Fatalf("%s %s: HTTP %d %.500s", method, path, resp.StatusCode, b)
	}
}
