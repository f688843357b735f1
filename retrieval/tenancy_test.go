package retrieval_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// mapped is a memory store that reports a mapping and reserved fields,
// as Elasticsearch and OpenSearch do.
type mapped struct {
	*memory.Store
	fields, reserved []string
	isolates         bool
}

func (m *mapped) Probe(ctx context.Context) (*capability.Evidence, error) {
	ev, err := m.Store.Probe(ctx)
	if err != nil {
		return nil, err
	}
	ev.MappedFields, ev.ReservedFields, ev.TenantIndices = m.fields, m.reserved, m.isolates
	return ev, nil
}

func mappedEngine(t *testing.T, a *mapped, tn retrieval.Tenancy) *retrieval.Engine {
	t.Helper()
	e, err := retrieval.NewEngine(context.Background(), a, retrieval.Options{Name: "t", Version: "0",
		Policy: capability.Policy{Writable: true}, Tenancy: tn, CursorKeys: [][]byte{[]byte("k")}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func addDocs(ctx context.Context, e *retrieval.Engine, metas ...map[string]any) error {
	docs := make([]rcp.Document, len(metas))
	for i, m := range metas {
		docs[i] = rcp.Document{Text: "x", Meta: m}
	}
	_, err := e.IndexAdd(ctx, &rcp.IndexAddParams{Documents: docs})
	return err
}

// TestIndexAddCanonicalMeta: every write stores one spelling per path and
// may not set a field the sidecar writes itself, whoever writes.
func TestIndexAddCanonicalMeta(t *testing.T) {
	st := memory.New(memory.Options{Writable: true, Fields: map[string]filterlang.FieldType{"a.b": filterlang.TypeInt}})
	e := mappedEngine(t, &mapped{Store: st, reserved: []string{"body", "_rcp.id"}}, retrieval.Tenancy{})
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		meta  map[string]any
		field string
	}{
		{"both spellings", map[string]any{"a.b": 1, "a": map[string]any{"b": 2}}, "documents[0].meta.a.b"},
		{"reserved content", map[string]any{"body": "x"}, "documents[0].meta.body"},
		{"below reserved", map[string]any{"body.x": "x"}, "documents[0].meta.body"},
		{"above reserved", map[string]any{"_rcp": "x"}, "documents[0].meta._rcp"},
		{"reserved nested", map[string]any{"_rcp": map[string]any{"id": "x"}}, "documents[0].meta._rcp.id"},
		{"empty segment", map[string]any{"a..b": 1}, "documents[0].meta.a..b"},
	} {
		err := addDocs(ctx, e, tc.meta)
		wantErr(t, err, rcp.CodeInvalidParams, "", tc.field)
	}
	if err := addDocs(ctx, e, map[string]any{"a.b": 1, "a": map[string]any{"c": 2}, "_rcp": map[string]any{"x": 1}}); err != nil {
		t.Fatal(err)
	}
	res := retrieve(t, e, `{"query":"x","k":5,"mode":"sparse","filter":{"field":"a.b","op":"eq","value":1}}`)
	if len(res.Hits) != 1 || filterlang.Lookup(res.Hits[0].Meta, "a.c") == nil || res.Hits[0].Meta["a.b"] != nil {
		t.Fatalf("stored meta %v, want one nested object a{b,c}", res.Hits)
	}
}

// TestHostileWriteFieldBudget. Attack: a tenant of a shared index writes
// documents with many new meta fields (spending the field budget every
// tenant shares and fixing each field's type for all), alone or spread
// over the documents of one request, or fields outside the operator's
// allow-list. Guarantee: the write is -32602 naming the first field over
// the budget or off the list, and nothing is stored; the fields a write
// added count as mapped afterwards, forced tenant fields are exempt, and
// callers without a tenant are not held to the policy.
func TestHostileWriteFieldBudget(t *testing.T) {
	three := 3
	for _, tc := range []struct {
		name   string
		tn     retrieval.Tenancy
		metas  []map[string]any
		field  string // "" for success
		unscop bool
	}{
		{"mapped fields pass", retrieval.Tenancy{}, []map[string]any{{"lang": "en", "geo": map[string]any{"lat": 1, "lon": 2}}}, "", false},
		{"default budget", retrieval.Tenancy{}, []map[string]any{manyFields(retrieval.DefaultMaxNewFields + 1)}, "documents[0].meta.f032", false},
		{"default budget across documents", retrieval.Tenancy{}, []map[string]any{manyFields(20), manyFields(40)}, "documents[1].meta.f032", false},
		{"explicit budget", retrieval.Tenancy{MaxNewFields: &three}, []map[string]any{{"x1": 1, "x2": 1, "x3": 1, "x4": 1}}, "documents[0].meta.x4", false},
		{"allow-list", retrieval.Tenancy{MetaFields: []string{"lang", "author"}}, []map[string]any{{"lang": "en", "year": 1}}, "documents[0].meta.year", false},
		{"allow-list admits below", retrieval.Tenancy{MetaFields: []string{"lang", "geo"}}, []map[string]any{{"lang": "en", "geo.lat": 1}}, "", false},
		{"allow-list means no new fields", retrieval.Tenancy{MetaFields: []string{"author"}}, []map[string]any{{"author": "a"}}, "documents[0].meta.author", false},
		{"forced fields exempt", retrieval.Tenancy{MetaFields: []string{"lang"}}, []map[string]any{{"lang": "en", "org": map[string]any{"id": "c"}}}, "", false},
		{"no tenant, no policy", retrieval.Tenancy{MetaFields: []string{"lang"}}, []map[string]any{manyFields(100)}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := memory.New(memory.Options{Writable: true})
			e := mappedEngine(t, &mapped{Store: st, fields: []string{"lang", "geo", "org.id"}}, tc.tn)
			ctx := adapters.WithTenant(context.Background(), adapters.Tenant{Forced: []string{"org.id"}})
			if tc.unscop {
				ctx = context.Background()
			}
			err := addDocs(ctx, e, tc.metas...)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantErr(t, err, rcp.CodeInvalidParams, "", tc.field)
			if st.Len() != 0 {
				t.Fatalf("a refused write stored %d documents", st.Len())
			}
		})
	}
	// What a write added is mapped afterwards (the engine mapped it).
	st := memory.New(memory.Options{Writable: true})
	e := mappedEngine(t, &mapped{Store: st, fields: []string{}}, retrieval.Tenancy{})
	ctx := adapters.WithTenant(context.Background(), adapters.Tenant{})
	if err := addDocs(ctx, e, manyFields(30)); err != nil {
		t.Fatal(err)
	}
	more := manyFields(30)
	more["g1"], more["g2"], more["g3"] = 1, 1, 1
	if err := addDocs(ctx, e, more); err != nil {
		t.Fatalf("30 known fields and 3 new ones: %v", err)
	}
	// An engine that keeps no mapping has no shared field budget.
	e = mappedEngine(t, &mapped{Store: memory.New(memory.Options{Writable: true})}, retrieval.Tenancy{})
	if err := addDocs(ctx, e, manyFields(100)); err != nil {
		t.Fatalf("schemaless engine: %v", err)
	}
}

// manyFields returns meta with n distinct fields f000…, in sorted order.
func manyFields(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m[fmt.Sprintf("f%03d", i)] = i
	}
	return m
}

// TestIndexIsolationNeedsTenant: under index isolation a write needs a
// tenant name, and an adapter that cannot isolate is refused at start-up.
func TestIndexIsolationNeedsTenant(t *testing.T) {
	st := memory.New(memory.Options{Writable: true})
	if _, err := retrieval.NewEngine(context.Background(), st, retrieval.Options{Tenancy: retrieval.Tenancy{Index: true}}); err == nil || !strings.Contains(err.Error(), "index of its own") {
		t.Fatalf("memory under index isolation: %v", err)
	}
	e := mappedEngine(t, &mapped{Store: st, isolates: true}, retrieval.Tenancy{Index: true})
	for name, ctx := range map[string]context.Context{
		"no tenant":      context.Background(),
		"unnamed tenant": adapters.WithTenant(context.Background(), adapters.Tenant{}),
	} {
		err := addDocs(ctx, e, nil)
		wantErr(t, err, rcp.CodeUnauthorized, "", "")
		_, err = e.IndexDelete(ctx, &rcp.IndexDeleteParams{IDs: []string{"x"}})
		wantErr(t, err, rcp.CodeUnauthorized, "", "")
		if name == "unnamed tenant" {
			_, err = e.Retrieve(ctx, params(t, `{"query":"x","k":1}`))
			wantErr(t, err, rcp.CodeUnauthorized, "", "")
		}
	}
}
