package filterlang

import (
	"encoding/json"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// FuzzValidateFilter checks ValidateFilter never panics and returns either
// a well-formed tree or an *rcp.Error with a §12 code and the right data.
func FuzzValidateFilter(f *testing.F) {
	for _, s := range []string{
		`null`, `{}`, `[]`, `{"and":[]}`,
		`{"and":[{"field":"kw","op":"eq","value":"en"},{"or":[{"field":"n","op":"gte","value":2023},{"field":"kw","op":"in","value":["news","blog"]}]}]}`,
		`{"not":{"field":"d","op":"lt","value":"2017-06-12T00:00:00Z"}}`,
		`{"field":"f","op":"gt","value":1e400}`,
		`{"field":"g","op":"exists"}`,
		`{"field":"txt","op":"contains","value":"quick"}`,
		`{"field":"n","op":"in","value":[1,2.5]}`,
		`{"and":[{"field":"kw","op":"eq","value":"a"}],"field":"kw"}`,
		`{"field":"kw","op":"regex","value":"a"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		tree, err := ValidateFilter(json.RawMessage(raw), testFields, []Op{OpEq, OpNe, OpGt, OpIn, OpContains, OpExists})
		if err != nil {
			checkFilterError(t, tree, err)
			return
		}
		checkTree(t, tree, 1)
		EvalFilter(tree, map[string]any{"kw": "en", "n": 3, "d": "2020-01-01"})
	})
}

// checkFilterError asserts the error shape promised by ValidateFilter.
func checkFilterError(t *testing.T, tree Filter, err *rcp.Error) {
	if tree != nil {
		t.Fatalf("tree %#v returned with error %v", tree, err)
	}
	switch err.Code {
	case rcp.CodeInvalidParams:
		if err.Data == nil || (err.Data.Field != "filter" && len(err.Data.Field) <= len("filter.")) {
			t.Fatalf("-32602 without a filter field: %#v", err.Data)
		}
	case rcp.CodeOptionUnsupported:
		if err.Data == nil || err.Data.Option == "" {
			t.Fatalf("-32005 without option: %#v", err.Data)
		}
	default:
		t.Fatalf("unexpected code %d", err.Code)
	}
}

// checkTree asserts the structural guarantees of a validated tree.
func checkTree(t *testing.T, f Filter, depth int) {
	if depth > MaxFilterDepth {
		t.Fatalf("tree deeper than %d", MaxFilterDepth)
	}
	switch n := f.(type) {
	case nil:
		if depth != 1 {
			t.Fatal("nil child in tree")
		}
	case *And:
		checkChildren(t, n.Children, depth)
	case *Or:
		checkChildren(t, n.Children, depth)
	case *Not:
		if n.Child == nil {
			t.Fatal("not without child")
		}
		checkTree(t, n.Child, depth+1)
	case *Cond:
		if _, ok := testFields[n.Field]; !ok || !opAllowed(n.Type, n.Op) {
			t.Fatalf("bad cond %#v", n)
		}
	default:
		t.Fatalf("unknown node %T", f)
	}
}

func checkChildren(t *testing.T, cs []Filter, depth int) {
	if len(cs) == 0 {
		t.Fatal("empty combinator")
	}
	for _, c := range cs {
		if c == nil {
			t.Fatal("nil child")
		}
		checkTree(t, c, depth+1)
	}
}
