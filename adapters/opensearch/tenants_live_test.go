package opensearch

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

func osDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestLiveTenantIndices: capabilities come from the configured body (its
// k-NN settings and vector field, before any tenant index exists); a
// tenant's first write creates its index from that body; reads before it
// are empty; a tenant index name held by an alias of other indices is
// refused for reads and writes.
func TestLiveTenantIndices(t *testing.T) {
	base := liveURL(t)
	prefix := "rcp-tenants-" + randHex(4)
	t.Cleanup(func() { osDo(t, http.MethodDelete, base+"/"+prefix+"-*", "") })
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.Writable, cfg.Refresh = []string{base}, prefix+"-all", true, "true"
	body := `{"settings":{"index":{"knn":true,"number_of_shards":1,"number_of_replicas":0}},"mappings":{"dynamic":"strict","properties":{
	  "text":{"type":"text"},"lang":{"type":"keyword"},
	  "vec":{"type":"knn_vector","dimension":4,"method":{"name":"hnsw","engine":"lucene","space_type":"cosinesimil"}}}}}`
	a, err := Factory.Open(context.Background(), cfg, adapters.Deps{TenantIndex: &adapters.TenantIndex{Template: prefix + "-{tenant}", Mapping: json.RawMessage(body)}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := retrieval.NewEngine(context.Background(), a, retrieval.Options{Name: "t", Version: "0", CursorKeys: [][]byte{[]byte("k")},
		Tenancy: retrieval.Tenancy{Index: true}, Policy: capability.Policy{Writable: true}})
	if err != nil {
		t.Fatal(err)
	}
	ev := e.Evidence()
	if !ev.TenantIndices || len(ev.VectorFields) != 1 || !ev.Deterministic || len(ev.FilterFields) == 0 {
		t.Fatalf("evidence from the configured body: %+v", ev)
	}
	ctx := func(name string) context.Context {
		return adapters.WithTenant(context.Background(), adapters.Tenant{Name: name})
	}
	get := func(c context.Context) (*rcp.RetrieveResult, error) {
		var p rcp.RetrieveParams
		_ = json.Unmarshal([]byte(`{"query":"report","k":5,"mode":"sparse"}`), &p)
		return e.Retrieve(c, &p)
	}
	if res, err := get(ctx("a")); err != nil || len(res.Hits) != 0 {
		t.Fatalf("read before the first write: %v %v", res, err)
	}
	if _, err := e.IndexAdd(ctx("a"), &rcp.IndexAddParams{Documents: []rcp.Document{{ID: "1", Text: "report one", Meta: map[string]any{"lang": "en"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.IndexAdd(ctx("a"), &rcp.IndexAddParams{Documents: []rcp.Document{{Text: "x", Meta: map[string]any{"color": "red"}}}}); err == nil {
		t.Fatal("a field outside the strict configured mapping was accepted: the index was not created from it")
	}
	if res, err := get(ctx("a")); err != nil || len(res.Hits) != 1 {
		t.Fatalf("tenant a: %v %v", res, err)
	}
	if st, out := osDo(t, http.MethodPost, base+"/_aliases", `{"actions":[{"add":{"index":"`+prefix+`-a","alias":"`+prefix+`-evil"}}]}`); st != http.StatusOK {
		t.Fatalf("alias: %d %s", st, out)
	}
	if res, err := get(ctx("evil")); err == nil {
		t.Fatalf("tenant evil read through an alias: %d hits", len(res.Hits))
	}
	if _, err := e.IndexAdd(ctx("evil"), &rcp.IndexAddParams{Documents: []rcp.Document{{Text: "planted"}}}); err == nil {
		t.Fatal("tenant evil wrote through an alias")
	}
}
