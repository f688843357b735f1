package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/mcpserver"
)

// genArgs writes a search tool's arguments as raw JSON: generated
// queries, k values in and out of range (and null), filters, unknown
// arguments, members repeated with a different value and whitespace.
func genArgs(r *rand.Rand, fields []string) string {
	var members []string
	add := func(k string, v any) {
		b, _ := json.Marshal(v)
		members = append(members, fmt.Sprintf("%q:%s", k, b))
	}
	if r.IntN(12) != 0 {
		add("query", []string{"sun", "moon light", "", "tide \u00e9\u4e16", "<b>&amp;</b>"}[r.IntN(5)])
	}
	switch r.IntN(6) {
	case 0: // no k: the tool's default
	case 1:
		members = append(members, `"k":null`)
	case 2:
		add("k", []any{0, -1, 101, 1.5, "3", 1e300}[r.IntN(6)])
	default:
		add("k", 1+r.IntN(20))
	}
	if r.IntN(3) == 0 {
		add("filter", genFilter(r, fields, 2))
	}
	if r.IntN(5) == 0 {
		add("mode", []string{"sparse", "dense", "hybrid", "bogus"}[r.IntN(4)])
	}
	if r.IntN(15) == 0 {
		add([]string{"includeText", "_meta", "candidateK", "Query"}[r.IntN(4)], 1)
	}
	if r.IntN(8) == 0 && len(members) > 0 { // a repeated member: the last one counts
		members = append(members, members[r.IntN(len(members))])
	}
	if r.IntN(8) == 0 && len(members) > 0 {
		add("k", 1+r.IntN(5))
	}
	r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	sep := []string{",", " , ", ",\n"}[r.IntN(3)]
	out := "{"
	for i, m := range members {
		if i > 0 {
			out += sep
		}
		out += m
	}
	return out + "}"
}

// TestSearchToolAnswersAsRetrieve: for generated arguments (valid,
// invalid and hostile), a search tool call answers exactly what the RCP
// retrieve of the same params answers: the same structured result (the
// latency aside) or the same RCP error code and field. The arguments are
// decoded once, straight into the retrieve params; the reference here
// decodes them as a map, fills in the default k and decodes the result.
func TestSearchToolAnswersAsRetrieve(t *testing.T) {
	const seed = 20261206
	e := engine(t, corpus(seed, 60), false, testFields)
	svc := service(t, mcpserver.Options{Engines: []mcpserver.Engine{{Name: "docs", Backend: e}}})
	cs := connect(t, svc, mcpserver.Caller{}, nil)
	fields := slices.Sorted(func(yield func(string) bool) {
		for f := range testFields {
			if !yield(f) {
				return
			}
		}
	})
	r := rand.New(rand.NewPCG(seed, 3))
	var served, refused int
	for i := range 400 {
		args := genArgs(r, fields)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("case %d (seed %d) %s: protocol error %v", i, seed, args, err)
		}
		want, werr := direct(t, e, args)
		var m map[string]any
		if json.Unmarshal([]byte(args), &m) != nil || m == nil || !hasKey(m, "query") || unknownArg(m) {
			// refused before retrieve: argument errors are the tool's own
			if !res.IsError {
				t.Fatalf("case %d (seed %d) %s: served, want an argument error", i, seed, args)
			}
			refused++
			continue
		}
		if werr != nil {
			code, field := rcpError(t, res, errorObject(t, res))
			if code != int(werr.Code) || field != werr.WireData().Field {
				t.Fatalf("case %d (seed %d) %s: error %d on %q, retrieve says %d on %q", i, seed, args, code, field, werr.Code, werr.WireData().Field)
			}
			refused++
			continue
		}
		if res.IsError {
			t.Fatalf("case %d (seed %d) %s: error %v, retrieve serves it", i, seed, args, res.Content)
		}
		got := canon(t, res.StructuredContent)
		exp := canon(t, want)
		if !reflect.DeepEqual(got, exp) {
			t.Fatalf("case %d (seed %d) %s:\n got %v\nwant %v", i, seed, args, got, exp)
		}
		served++
	}
	if served < 100 || refused < 40 {
		t.Fatalf("generator too lopsided: %d served, %d refused", served, refused)
	}
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// unknownArg reports an argument the search tool does not take.
func unknownArg(m map[string]any) bool {
	for k := range m {
		switch k {
		case "query", "k", "mode", "filter", "cursor", "tokenBudget":
		default:
			return true
		}
	}
	return false
}

// canon is v as generic JSON without usage.latencyMs, which two runs of
// the same retrieve need not share.
func canon(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if u, ok := m["usage"].(map[string]any); ok {
		delete(u, "latencyMs")
	}
	return m
}
