package mcpserver_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/mcpserver"
	"github.com/rcp-sidecar/rcp-sidecar/mcpserver/mcptest"
)

// TestSchemasArePortable: every tool's input and output schema is one a
// single-type schema dialect takes: no property with an array of types,
// every object (filter included) typed, every $ref resolvable — over an
// index with a field of every type (writable: the write tools too) and a
// generated wide index whose schema lists some fields and a generic leaf
// for the rest.
func TestSchemasArePortable(t *testing.T) {
	const seed = 20261206
	r := rand.New(rand.NewPCG(seed, 1))
	types := []filterlang.FieldType{filterlang.TypeKeyword, filterlang.TypeInt, filterlang.TypeFloat,
		filterlang.TypeBool, filterlang.TypeDate, filterlang.TypeText}
	wide := map[string]filterlang.FieldType{}
	docs := make([]adapters.Document, 10)
	for i := range docs {
		docs[i] = adapters.Document{ID: fmt.Sprintf("w%02d", i), Text: "the sun", Meta: map[string]any{}}
	}
	for i := range 500 {
		name := fmt.Sprintf("f%03d", i)
		wide[name] = types[r.IntN(len(types))]
	}
	all := map[string]filterlang.FieldType{}
	for i, ft := range types {
		all[fmt.Sprintf("t%d", i)] = ft
	}
	svc := service(t, mcpserver.Options{MaxSchemaFields: 40, Engines: []mcpserver.Engine{
		{Name: "docs", Backend: engine(t, corpus(seed, 10), true, all)},
		{Name: "logs", Backend: engine(t, docs, false, wide)},
	}})
	list, err := connect(t, svc, mcpserver.Caller{}, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var withFilter int
	for _, tl := range list.Tools {
		for _, s := range []struct {
			what   string
			schema any
		}{{"input", tl.InputSchema}, {"output", tl.OutputSchema}} {
			if s.schema == nil {
				continue
			}
			for _, p := range mcptest.Unportable(s.schema) {
				t.Errorf("seed %d: %s %s schema: %s", seed, tl.Name, s.what, p)
			}
		}
		if in, _ := tl.InputSchema.(map[string]any); in != nil {
			if f, ok := in["properties"].(map[string]any)["filter"]; ok {
				withFilter++
				if f.(map[string]any)["type"] != "object" {
					t.Errorf("%s: filter %v has no type object", tl.Name, f)
				}
			}
		}
	}
	if withFilter != 2 {
		t.Fatalf("%d search tools with a filter among %d tools, want 2", withFilter, len(list.Tools))
	}
}
