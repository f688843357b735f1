package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// The hostile-client suite: each test is an attack by a client holding a
// valid tenant key, run through `serve` against a real engine, and the
// guarantee the sidecar keeps. Run it with
//
//	go test -race -count=1 -run Hostile ./cmd/rcp-sidecar/ ./internal/access/ ./adapters/
//
// after sourcing integration/.work/elasticsearch.env (and opensearch.env).

// liveEngine is an engine the hostile tests run against.
type liveEngine struct {
	name, url string
}

// hostileEngines returns Elasticsearch (required, as every live test
// here) and OpenSearch when RCP_OS_URL is set.
func hostileEngines(t *testing.T) []liveEngine {
	t.Helper()
	var out []liveEngine
	for _, e := range itest.SearchEngines(t) {
		out = append(out, liveEngine{e.Name, e.URL})
	}
	return out
}

// engineDo sends a raw request to the engine (test setup and checks).
func engineDo(t *testing.T, base, method, path, body string) (int, string) {
	t.Helper()
	return itest.EngineDo(t, base, method, path, body)
}

// uniqueName is prefix plus a random suffix, lower-case.
func uniqueName(prefix string) string { return itest.UniqueName(prefix) }

// createLiveIndex creates index name with body and deletes it (and the
// indices matching cleanup patterns) when the test ends.
func createLiveIndex(t *testing.T, e liveEngine, name, body string, cleanup ...string) {
	t.Helper()
	itest.CreateIndex(t, e.url, name, body, cleanup...)
}

// keyHash is the sha256:<hex> digest of a secret, as the configuration
// holds it.
func keyHash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// serveConfig writes cfg to a file and serves it.
func serveConfig(t *testing.T, cfg string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, path, cfg)
	return startServe(t, "--config", path)
}

// rpcAs makes one RCP call with a key; exactly one of result, error.
func rpcAs(t *testing.T, base, secret, method string, params any) (json.RawMessage, *rcp.Error) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	st, out := rpcPost(t, base+"/"+method, secret, string(body))
	var r struct {
		Result json.RawMessage
		Error  *rcp.Error
	}
	if err := json.Unmarshal(out, &r); err != nil || (r.Result == nil) == (r.Error == nil) {
		t.Fatalf("%s: HTTP %d %s", method, st, out)
	}
	return r.Result, r.Error
}

// hits retrieves query for a key and returns the hits.
func hits(t *testing.T, base, secret, query string) []rcp.Hit {
	t.Helper()
	res, rerr := rpcAs(t, base, secret, "retrieve", map[string]any{"query": query, "k": 50, "mode": "sparse"})
	if rerr != nil {
		t.Fatalf("retrieve %q: %+v", query, rerr)
	}
	var r rcp.RetrieveResult
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	return r.Hits
}

// addAs writes documents for a key and returns the error, if any.
func addAs(t *testing.T, base, secret string, docs ...map[string]any) *rcp.Error {
	t.Helper()
	_, rerr := rpcAs(t, base, secret, "index/add", map[string]any{"documents": docs})
	return rerr
}

func wantInvalid(t *testing.T, rerr *rcp.Error, field string) {
	t.Helper()
	if rerr == nil || rerr.Code != rcp.CodeInvalidParams || rerr.Data == nil || rerr.Data.Field != field {
		t.Fatalf("want -32602 on %s, got %+v", field, rerr)
	}
}

func doc(text string, meta map[string]any) map[string]any {
	d := map[string]any{"text": text}
	if meta != nil {
		d["meta"] = meta
	}
	return d
}

// Secrets of the hostile suite's keys.
const (
	tenantCKey = "tenant-c-key-0000000000"
	tenantDKey = "tenant-d-key-0000000000"
	opsKey     = "ops-key-000000000000000"
)

// sharedConfig serves one writable index of engine e shared by tenants c
// and d (filter org.id), with an unscoped ops key; tenancy is the
// backend's tenancy block ("" for none).
func sharedConfig(e liveEngine, index, tenancy string) string {
	if tenancy != "" {
		tenancy = "\n    tenancy: " + tenancy
	}
	return fmt.Sprintf(`backends:
  - name: docs
    engine: %s
    settings: {urls: [%q], index: %s, writable: true, refresh: "true"}
    policy: {writable: true}%s
access:
  keys:
    - {id: c, hash: %q, write: true, id_prefix: "c/", filter: {field: org.id, op: eq, value: c}}
    - {id: d, hash: %q, write: true, id_prefix: "d/", filter: {field: org.id, op: eq, value: d}}
    - {id: ops, hash: %q, write: true}
`, e.name, e.url, index, tenancy, keyHash(tenantCKey), keyHash(tenantDKey), keyHash(opsKey))
}

// orgMapping maps the content, a title and the tenant field org.id.
const orgMapping = `{"settings":{"number_of_shards":1,"number_of_replicas":0},"mappings":{"properties":{
  "text":{"type":"text"},"title":{"type":"text"},"lang":{"type":"keyword"},"org":{"properties":{"id":{"type":"keyword"}}}}}}`

// TestHostileTenantPlant. Attack (reported against Elasticsearch): tenant
// c, whose key filter is org.id eq c, writes a document whose meta names
// org.id d in some spelling the engine indexes as org.id — the nested
// object the sidecar used to write the forced value beside, the flat key,
// both, an array, an object in an array, a path below it — or sets a
// field the sidecar writes itself (the content field). Guarantee: the
// write is -32602 naming the field, nothing is stored, and tenant d's
// retrieve never returns it; a document that repeats c's own value is
// stored for c alone.
func TestHostileTenantPlant(t *testing.T) {
	for _, e := range hostileEngines(t) {
		t.Run(e.name, func(t *testing.T) {
			index := uniqueName("rcp-hostile-plant")
			createLiveIndex(t, e, index, orgMapping)
			base := serveConfig(t, sharedConfig(e, index, ""))
			attacks := []struct {
				name  string
				meta  map[string]any
				field string
			}{
				{"nested object (the report)", map[string]any{"org": map[string]any{"id": "d"}}, "documents[0].meta.org.id"},
				{"flat key", map[string]any{"org.id": "d"}, "documents[0].meta.org.id"},
				{"both spellings", map[string]any{"org": map[string]any{"id": "d"}, "org.id": "c"}, "documents[0].meta.org.id"},
				{"array", map[string]any{"org.id": []any{"c", "d"}}, "documents[0].meta.org.id"},
				{"object in array", map[string]any{"org": []any{map[string]any{"id": "d"}}}, "documents[0].meta.org"},
				{"scalar prefix", map[string]any{"org": "d"}, "documents[0].meta.org"},
				{"path below", map[string]any{"org.id.x": "d"}, "documents[0].meta.org.id.x"},
				{"content field", map[string]any{"text": "planted"}, "documents[0].meta.text"},
			}
			for _, a := range attacks {
				rerr := addAs(t, base, tenantCKey, doc("planted "+a.name, a.meta))
				if rerr == nil || rerr.Data == nil || rerr.Data.Field != a.field {
					t.Errorf("%s: want -32602 on %s, got %+v", a.name, a.field, rerr)
				}
			}
			if got := hits(t, base, tenantDKey, "planted"); len(got) != 0 {
				t.Fatalf("tenant d retrieves %d planted documents: %v", len(got), got[0].Meta)
			}
			if got := hits(t, base, opsKey, "planted"); len(got) != 0 {
				t.Fatalf("%d planted documents were stored", len(got))
			}
			if rerr := addAs(t, base, tenantCKey, doc("echoed own tenant", map[string]any{"org.id": "c", "lang": "en"})); rerr != nil {
				t.Fatalf("repeating c's own tenant value: %+v", rerr)
			}
			if n := len(hits(t, base, tenantCKey, "echoed")); n != 1 {
				t.Fatalf("tenant c sees %d of its echoed documents", n)
			}
			if n := len(hits(t, base, tenantDKey, "echoed")); n != 0 {
				t.Fatalf("tenant d sees tenant c's document")
			}
		})
	}
}

// manyMeta returns n distinct meta fields named prefix000…, each set to v
// (a number maps to one field, a string to a text field and its keyword
// sub-field).
func manyMeta(prefix string, n int, v any) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m[fmt.Sprintf("%s%03d", prefix, i)] = v
	}
	return m
}

// TestHostileFieldExplosion. Attack (reported against Elasticsearch):
// tenant c adds one document with 960 new numeric meta fields, spending
// the shared index's field budget (index.mapping.total_fields.limit 1000)
// so that tenant d's next write with 30 new fields is refused, and fixing
// the type of every field it names for every tenant. Guarantee: a tenant
// write adds at most tenancy.max_new_fields unmapped fields (32 by
// default, 0 with an allow-list, which admits only the listed paths), the
// refusal is -32602 naming the first field over the budget, and tenant
// d's write goes through. When the engine itself refuses a write past its
// field limit, the error says so and names the document.
func TestHostileFieldExplosion(t *testing.T) {
	for _, e := range hostileEngines(t) {
		t.Run(e.name, func(t *testing.T) {
			index := uniqueName("rcp-hostile-fields")
			createLiveIndex(t, e, index, orgMapping)
			base := serveConfig(t, sharedConfig(e, index, ""))
			if rerr := addAs(t, base, tenantCKey, doc("explosion", manyMeta("c", 960, 1))); rerr == nil || rerr.Data == nil || rerr.Data.Field != "documents[0].meta.c032" {
				t.Errorf("960 new fields: want -32602 on documents[0].meta.c032, got %+v", rerr)
			}
			if rerr := addAs(t, base, tenantDKey, doc("after the explosion", manyMeta("d", 30, "v"))); rerr != nil {
				t.Fatalf("tenant d's write after c's attempt: %+v", rerr)
			}
			// Split into budget-sized writes, the attack is throttled but
			// not stopped; an allow-list stops it.
			allow := uniqueName("rcp-hostile-allow")
			createLiveIndex(t, e, allow, orgMapping)
			base = serveConfig(t, sharedConfig(e, allow, "{meta_fields: [lang, title]}"))
			wantInvalid(t, addAs(t, base, tenantCKey, doc("x", map[string]any{"lang": "en", "color": "red"})), "documents[0].meta.color")
			if rerr := addAs(t, base, tenantCKey, doc("allowed", map[string]any{"lang": "en", "title": "T"})); rerr != nil {
				t.Fatalf("allow-listed, mapped fields: %+v", rerr)
			}
			unmapped := uniqueName("rcp-hostile-unmapped")
			createLiveIndex(t, e, unmapped, `{"mappings":{"properties":{"text":{"type":"text"},"org":{"properties":{"id":{"type":"keyword"}}}}}}`)
			base = serveConfig(t, sharedConfig(e, unmapped, "{meta_fields: [lang]}"))
			wantInvalid(t, addAs(t, base, tenantCKey, doc("x", map[string]any{"lang": 7})), "documents[0].meta.lang")
			// The engine's own limit: no sidecar budget, a 10-field index.
			small := uniqueName("rcp-hostile-limit")
			createLiveIndex(t, e, small, `{"settings":{"index.mapping.total_fields.limit":10},"mappings":{"properties":{"text":{"type":"text"},"org":{"properties":{"id":{"type":"keyword"}}}}}}`)
			base = serveConfig(t, sharedConfig(e, small, "{max_new_fields: -1}"))
			rerr := addAs(t, base, tenantCKey, doc("fine", nil), doc("too many", manyMeta("f", 20, 1)))
			wantInvalid(t, rerr, "documents[1].meta")
			if !strings.Contains(rerr.Message, "index.mapping.total_fields.limit") {
				t.Fatalf("the engine's field-limit refusal does not say so: %q", rerr.Message)
			}
		})
	}
}

// isolatedConfig serves engine e with each tenant in an index of its own
// named prefix-{tenant}; keys maps a key secret to its tenant value.
func isolatedConfig(t *testing.T, e liveEngine, prefix string, keys map[string]string) string {
	t.Helper()
	mapping := filepath.Join(t.TempDir(), "tenant-mapping.json")
	writeFile(t, mapping, orgMapping)
	// What callers without a tenant read: every tenant index through a
	// pattern on Elasticsearch; OpenSearch takes one index or alias.
	unscoped := prefix + "-*"
	if e.name == "opensearch" {
		unscoped = prefix + "-all"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `backends:
  - name: docs
    engine: %s
    settings: {urls: [%q], index: %q, writable: true, refresh: "true"}
    policy: {writable: true}
    tenancy: {mode: index, index: "%s-{tenant}", mapping_file: %q}
access:
  keys:
    - {id: ops, hash: %q}
`, e.name, e.url, unscoped, prefix, mapping, keyHash(opsKey))
	i := 0
	for secret, tenant := range keys {
		fmt.Fprintf(&b, "    - {id: k%d, hash: %q, write: true, tenant: %q}\n", i, keyHash(secret), tenant)
		i++
	}
	return b.String()
}

// rareScore is tenant secret's top BM25 score for the rare term.
func rareScore(t *testing.T, base, secret string) float64 {
	t.Helper()
	hs := hits(t, base, secret, "zyxwvrare")
	if len(hs) == 0 {
		t.Fatal("the tenant's own rare-term document is not found")
	}
	return hs[0].Score
}

// statsAttack runs the statistics side channel from tenant b's side and
// returns tenant a's score for a rare term before b's documents, with
// them, and after b deleted them.
func statsAttack(t *testing.T, base, keyA, keyB string) (before, during, after float64) {
	t.Helper()
	own := []map[string]any{doc("zyxwvrare appears once in the report of a", nil)}
	for i := range 8 {
		own = append(own, doc(fmt.Sprintf("common report number %d of a", i), nil))
	}
	if rerr := addAs(t, base, keyA, own...); rerr != nil {
		t.Fatal(rerr)
	}
	before = rareScore(t, base, keyA)
	var probes []map[string]any
	var ids []string
	for i := range 6 {
		id := fmt.Sprintf("probe%d", i)
		ids = append(ids, id)
		probes = append(probes, map[string]any{"id": id, "text": "zyxwvrare zyxwvrare probe of b"})
	}
	if rerr := addAs(t, base, keyB, probes...); rerr != nil {
		t.Fatal(rerr)
	}
	during = rareScore(t, base, keyA)
	if _, rerr := rpcAs(t, base, keyB, "index/delete", map[string]any{"ids": ids}); rerr != nil {
		t.Fatal(rerr)
	}
	after = rareScore(t, base, keyA)
	return before, during, after
}

// TestHostileStatisticsSideChannel. Attack (reported against
// Elasticsearch): tenant b learns whether tenant a's documents contain a
// term by writing documents with it and watching a's BM25 scores, or
// disturbs a's ranking, because both share the index's term statistics;
// after b deletes its documents a's score stays changed (deleted documents
// count until segments merge). Guarantee: with tenancy mode index, a's
// score for the rare term is exactly the same before, during and after
// b's writes and deletes. In mode shared the side channel exists; this
// test documents it (docs/access.md, Tenancy) by requiring a's score to move.
func TestHostileStatisticsSideChannel(t *testing.T) {
	const keyA, keyB = "stats-tenant-a-key-000", "stats-tenant-b-key-000"
	for _, e := range hostileEngines(t) {
		t.Run(e.name+"/shared", func(t *testing.T) {
			index := uniqueName("rcp-hostile-stats-shared")
			createLiveIndex(t, e, index, orgMapping)
			cfg := sharedConfig(e, index, "")
			cfg = strings.Replace(cfg, "  keys:\n", fmt.Sprintf("  keys:\n    - {id: a, hash: %q, write: true, id_prefix: \"a/\", filter: {field: org.id, op: eq, value: a}}\n    - {id: b, hash: %q, write: true, id_prefix: \"b/\", filter: {field: org.id, op: eq, value: b}}\n", keyHash(keyA), keyHash(keyB)), 1)
			before, during, after := statsAttack(t, serveConfig(t, cfg), keyA, keyB)
			t.Logf("shared index: tenant a's score %.6f, with b's documents %.6f, after b deleted them %.6f", before, during, after)
			if during >= before {
				t.Fatalf("the side channel this test documents is gone: a's score %.6f did not drop to below %.6f", during, before)
			}
		})
		t.Run(e.name+"/index", func(t *testing.T) {
			prefix := uniqueName("rcp-hostile-stats")
			t.Cleanup(func() { engineDo(t, e.url, http.MethodDelete, "/"+prefix+"-*", "") })
			base := serveConfig(t, isolatedConfig(t, e, prefix, map[string]string{keyA: "a", keyB: "b"}))
			before, during, after := statsAttack(t, base, keyA, keyB)
			if during != before || after != before {
				t.Fatalf("tenant a's score moved with tenant b's writes: %.9f, %.9f, %.9f", before, during, after)
			}
			if st, out := engineDo(t, e.url, http.MethodGet, "/"+prefix+"-a/_count", ""); st != http.StatusOK || !strings.Contains(out, `"count":9`) {
				t.Fatalf("tenant a's own index: HTTP %d %s", st, out)
			}
		})
	}
}

// TestHostileTenantIndexNames. Attack: tenant values chosen so that the
// index name built from them addresses another tenant's index: a pattern
// (*, acme*), a list (acme,globex), a path (.., ../acme), the victim in
// upper case, _all, a value whose escape spells another. Guarantee: each
// such tenant gets an index of its own inside the template, escaped to
// the index-name alphabet; it neither retrieves, overwrites nor deletes
// the victim's document, and the victim's index holds exactly its own.
func TestHostileTenantIndexNames(t *testing.T) {
	hostile := []string{"*", "acme*", "acme,globex", "..", "../acme", "ACME", "_all", "_61cme", "acme/../globex", "acme globex"}
	for _, e := range hostileEngines(t) {
		t.Run(e.name, func(t *testing.T) {
			prefix := uniqueName("rcp-hostile-names")
			t.Cleanup(func() { engineDo(t, e.url, http.MethodDelete, "/"+prefix+"-*", "") })
			keys := map[string]string{"victim-acme-key-0000000": "acme", "victim-globex-key-00000": "globex"}
			secret := func(i int) string { return fmt.Sprintf("hostile-tenant-key-%04d", i) }
			for i, v := range hostile {
				keys[secret(i)] = v
			}
			base := serveConfig(t, isolatedConfig(t, e, prefix, keys))
			for _, victim := range []string{"victim-acme-key-0000000", "victim-globex-key-00000"} {
				if rerr := addAs(t, base, victim, map[string]any{"id": "secret", "text": "confidential plans of " + keys[victim]}); rerr != nil {
					t.Fatal(rerr)
				}
			}
			for i, v := range hostile {
				if rerr := addAs(t, base, secret(i), map[string]any{"id": "secret", "text": "overwritten by " + v}); rerr != nil {
					t.Fatalf("tenant %q: %+v", v, rerr)
				}
				for _, h := range hits(t, base, secret(i), "confidential plans overwritten") {
					if !strings.Contains(h.Text, "overwritten by") {
						t.Fatalf("tenant %q retrieves %q", v, h.Text)
					}
				}
				res, rerr := rpcAs(t, base, secret(i), "index/delete", map[string]any{"ids": []string{"secret", "../secret", "*"}})
				if rerr != nil || !strings.Contains(string(res), `"deleted":1`) {
					t.Fatalf("tenant %q deleting: %s %+v", v, res, rerr)
				}
			}
			for _, victim := range []string{"victim-acme-key-0000000", "victim-globex-key-00000"} {
				hs := hits(t, base, victim, "confidential plans overwritten")
				if len(hs) != 1 || !strings.Contains(hs[0].Text, "confidential plans of") {
					t.Fatalf("victim %s sees %v", keys[victim], hs)
				}
			}
			_, out := engineDo(t, e.url, http.MethodGet, "/_cat/indices/"+prefix+"-*?h=index", "")
			names := strings.Fields(out)
			if len(names) != len(keys) {
				t.Fatalf("%d tenants made %d indices: %v", len(keys), len(names), names)
			}
			for _, n := range names {
				if strings.ContainsAny(strings.TrimPrefix(n, prefix+"-"), `*,/\.ABCDEFGHIJKLMNOPQRSTUVWXYZ `) {
					t.Errorf("index %q leaves the escaped alphabet", n)
				}
			}
		})
	}
}
