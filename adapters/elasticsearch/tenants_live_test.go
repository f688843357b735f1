package elasticsearch

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// liveTenantEngine opens an Engine that keeps each tenant in an index
// prefix-{tenant}, paging under points in time.
func liveTenantEngine(t *testing.T) (*retrieval.Engine, string, string) {
	t.Helper()
	base := liveURL(t)
	prefix := uniqueName("rcp-tenants")
	t.Cleanup(func() { _, _, _ = esDo(context.Background(), base, http.MethodDelete, "/"+prefix+"-*", nil) })
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.Writable, cfg.Refresh = []string{base}, prefix+"-*", true, "true"
	cfg.PIT, cfg.PITKeepAlive = true, 30*time.Second
	mapping := `{"settings":{"number_of_shards":1,"number_of_replicas":0},"mappings":{"dynamic":"strict","properties":{"text":{"type":"text"},"lang":{"type":"keyword"}}}}`
	a, err := open(context.Background(), cfg, adapters.Deps{TenantIndex: &adapters.TenantIndex{Template: prefix + "-{tenant}", Mapping: json.RawMessage(mapping)}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := retrieval.NewEngine(context.Background(), a, retrieval.Options{Name: "t", Version: "0", CursorKeys: [][]byte{[]byte("k")},
		Tenancy: retrieval.Tenancy{Index: true}, Policy: capability.Policy{Writable: true}})
	if err != nil {
		t.Fatal(err)
	}
	return e, base, prefix
}

func tenantCtx(name string) context.Context {
	return adapters.WithTenant(context.Background(), adapters.Tenant{Name: name})
}

// TestHostileTenantIndexSnapshots. Attack: under index isolation, tenant b
// pins tenant a's indexVersion (a point in time on a's index) or
// continues a's cursor, and tenant "evil" reads and writes through an
// alias that holds its index name but points at a's index. Guarantee: b's
// pin is -32602 and its cursor refused, evil's read and write are refused;
// and, as served: a tenant's first write creates its index from the
// configured body (not from dynamic mapping), reads before it are empty,
// and a tenant's pages run under a point in time on its own index.
func TestHostileTenantIndexSnapshots(t *testing.T) {
	e, base, prefix := liveTenantEngine(t)
	get := func(ctx context.Context, js string) (*rcp.RetrieveResult, error) {
		var p rcp.RetrieveParams
		if err := json.Unmarshal([]byte(js), &p); err != nil {
			t.Fatal(err)
		}
		return e.Retrieve(ctx, &p)
	}
	res, err := get(tenantCtx("a"), `{"query":"report","k":2,"mode":"sparse"}`)
	if err != nil || len(res.Hits) != 0 {
		t.Fatalf("read before the first write: %v, %v", res, err)
	}
	docs := []rcp.Document{{ID: "1", Text: "report one", Meta: map[string]any{"lang": "en"}},
		{ID: "2", Text: "report two"}, {ID: "3", Text: "report three"}}
	if _, err := e.IndexAdd(tenantCtx("a"), &rcp.IndexAddParams{Documents: docs}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.IndexAdd(tenantCtx("a"), &rcp.IndexAddParams{Documents: []rcp.Document{{Text: "x", Meta: map[string]any{"color": "red"}}}}); err == nil {
		t.Fatal("a field outside the strict configured mapping was accepted: the index was not created from it")
	}
	first, err := get(tenantCtx("a"), `{"query":"report","k":2,"mode":"sparse"}`)
	if err != nil || len(first.Hits) != 2 || first.NextCursor == "" || first.IndexVersion == "" {
		t.Fatalf("tenant a's first page: %+v %v", first, err)
	}
	second, err := get(tenantCtx("a"), `{"query":"report","k":2,"mode":"sparse","cursor":"`+first.NextCursor+`"}`)
	if err != nil || len(second.Hits) != 1 {
		t.Fatalf("tenant a's second page: %+v %v", second, err)
	}
	pinned := `{"query":"report","k":5,"mode":"sparse","indexVersion":"` + first.IndexVersion + `"}`
	if _, err := get(tenantCtx("b"), pinned); err == nil || !strings.Contains(err.Error(), "indexVersion") {
		t.Fatalf("tenant b pinned tenant a's snapshot: %v", err)
	}
	if _, err := get(tenantCtx("b"), `{"query":"report","k":2,"mode":"sparse","cursor":"`+first.NextCursor+`"}`); err == nil {
		t.Fatal("tenant b continued tenant a's pages")
	}
	// An alias named like tenant "evil"'s index, over tenant a's index.
	if st, out, err := esDo(context.Background(), base, http.MethodPost, "/_aliases", map[string]any{"actions": []any{
		map[string]any{"add": map[string]any{"index": prefix + "-a", "alias": prefix + "-evil"}}}}); err != nil || st != http.StatusOK {
		t.Fatalf("alias: %d %s %v", st, out, err)
	}
	if res, err := get(tenantCtx("evil"), `{"query":"report","k":5,"mode":"sparse"}`); err == nil {
		t.Fatalf("tenant evil read through an alias: %d hits", len(res.Hits))
	}
	if _, err := e.IndexAdd(tenantCtx("evil"), &rcp.IndexAddParams{Documents: []rcp.Document{{Text: "planted"}}}); err == nil {
		t.Fatal("tenant evil wrote through an alias")
	}
	if n, err := e.IndexDelete(tenantCtx("b"), &rcp.IndexDeleteParams{IDs: []string{"1", "2"}}); err != nil || n.Deleted != 0 {
		t.Fatalf("tenant b (no index yet) deleting tenant a's ids: %+v %v", n, err)
	}
}
