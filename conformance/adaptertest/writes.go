package adaptertest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// testWrites covers index/add and index/delete (§7.10, §7.11). Each
// subtest gets a fresh harness, since writes change the corpus.
func testWrites(t *testing.T, mk HarnessMaker) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *env)
	}{
		{"UpsertIdempotent", testUpsertIdempotent},
		{"PositionalIDs", testPositionalIDs},
		{"Replace", testReplace},
		{"DeleteIdempotent", testDeleteIdempotent},
		{"DeleteCorpusDoc", testDeleteCorpusDoc},
		{"VisibleToFilter", testVisibleToFilter},
		{"SpecialID", testSpecialID},
		{"LongID", testLongID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, mk, full)
			if e.caps.Index == nil || !e.caps.Index.Writable {
				t.Skip("not advertised: index.writable")
			}
			tc.run(t, e)
		})
	}
}

func doc(id, text string) map[string]any {
	d := map[string]any{"text": text}
	if id != "" {
		d["id"] = id
	}
	return d
}

// add calls index/add and returns the ids.
func (e *env) add(t *testing.T, docs ...map[string]any) []string {
	t.Helper()
	raw, rerr := e.call(t, rcp.MethodIndexAdd, P{"documents": docs})
	if rerr != nil {
		t.Fatalf("index/add: %d %s %+v", rerr.Code, rerr.Message, rerr.Data)
	}
	var res rcp.IndexAddResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	return res.IDs
}

// del calls index/delete and returns deleted.
func (e *env) del(t *testing.T, ids ...string) int {
	t.Helper()
	raw, rerr := e.call(t, rcp.MethodIndexDelete, P{"ids": ids})
	if rerr != nil {
		t.Fatalf("index/delete: %d %s %+v", rerr.Code, rerr.Message, rerr.Data)
	}
	var res rcp.IndexDeleteResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	return res.Deleted
}

// find looks a written document up by a word of its text: lexically when
// sparse is advertised, else densely by its full text (the fake embedder
// gives equal texts equal vectors).
func (e *env) find(t *testing.T, word, fullText string) []rcp.Hit {
	t.Helper()
	p := P{"query": word, "k": 10, "mode": "sparse", "includeText": true}
	if !e.hasMode(rcp.ModeSparse) {
		p = P{"query": fullText, "k": 3, "mode": "dense", "includeText": true}
	}
	return e.mustRetrieve(t, p).Hits
}

func countID(hits []rcp.Hit, id string) int {
	n := 0
	for _, h := range hits {
		if h.ID == id {
			n++
		}
	}
	return n
}

func testUpsertIdempotent(t *testing.T, e *env) {
	const text = "xylophone quartet rehearsal"
	for range 2 {
		if diff := cmp.Diff([]string{"w-1"}, e.add(t, doc("w-1", text))); diff != "" {
			t.Fatalf("ids (-want +got):\n%s", diff)
		}
	}
	hits := e.find(t, "xylophone", text)
	if n := countID(hits, "w-1"); n != 1 || hits[0].ID != "w-1" {
		t.Errorf("after two upserts of w-1: hits %v, want w-1 exactly once and first", hitIDs(hits))
	}
	if e.hasMode(rcp.ModeDense) {
		all := e.mustRetrieve(t, P{"query": QueryEverything, "mode": "dense", "k": e.maxK()})
		if got, want := len(all.Hits), len(e.schema.Docs)+1; got != want {
			t.Errorf("corpus has %d documents after two upserts of one id, want %d", got, want)
		}
	}
}

func testPositionalIDs(t *testing.T, e *env) {
	got := e.add(t, doc("w-c", "charlie"), doc("w-a", "alpha"), doc("w-b", "bravo"))
	if diff := cmp.Diff([]string{"w-c", "w-a", "w-b"}, got); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	got = e.add(t, doc("w-x", "xray"), doc("", "minted identity"), doc("w-y", "yankee"))
	if len(got) != 3 || got[0] != "w-x" || got[2] != "w-y" || got[1] == "" || slices.Contains([]string{"w-x", "w-y"}, got[1]) {
		t.Errorf("ids = %q, want [w-x <minted> w-y]", got)
	}
}

func testReplace(t *testing.T, e *env) {
	e.add(t, doc("w-r", "old quokka"))
	e.add(t, doc("w-r", "new wombat"))
	if hits := e.find(t, "quokka", "old quokka"); countID(hits, "w-r") > 0 && e.hasMode(rcp.ModeSparse) {
		t.Errorf("replaced text still matches: %v", hitIDs(hits))
	}
	hits := e.find(t, "wombat", "new wombat")
	if len(hits) == 0 || hits[0].ID != "w-r" {
		t.Fatalf("replacement not found first: %v", hitIDs(hits))
	}
	if !strings.Contains(hits[0].Text, "wombat") {
		t.Errorf("hit text = %q, want the replacement text", hits[0].Text)
	}
}

func testDeleteIdempotent(t *testing.T, e *env) {
	e.add(t, doc("w-d", "ephemeral narwhal"))
	if n := e.del(t, "w-d", "never-existed"); n != 1 {
		t.Errorf("first delete: deleted = %d, want 1", n)
	}
	if n := e.del(t, "w-d", "never-existed"); n != 0 {
		t.Errorf("repeated delete: deleted = %d, want 0", n)
	}
	if hits := e.find(t, "narwhal", "ephemeral narwhal"); countID(hits, "w-d") > 0 {
		t.Errorf("deleted document still returned: %v", hitIDs(hits))
	}
}

func testDeleteCorpusDoc(t *testing.T, e *env) {
	if n := e.del(t, "d01"); n != 1 {
		t.Errorf("deleted = %d, want 1", n)
	}
	if hits := e.find(t, "ristretto", "vec:d01"); countID(hits, "d01") > 0 {
		t.Errorf("deleted d01 still returned: %v", hitIDs(hits))
	}
}

func testVisibleToFilter(t *testing.T, e *env) {
	f := cond("lang", "eq", "xx")
	e.skipUnlessFilter(t, f)
	d := doc("w-f", "filterable pangolin")
	d["meta"] = map[string]any{"lang": "xx", "year": 2030, "tags": []string{"new"}}
	e.add(t, d)
	q := e.anyQuery()
	if !e.hasMode(rcp.ModeDense) {
		q = P{"query": "filterable pangolin"}
	}
	res := e.mustRetrieve(t, q.With("k", e.maxK()).With("filter", f))
	if diff := cmp.Diff([]string{"w-f"}, hitIDs(res.Hits)); diff != "" {
		t.Errorf("filter on the new document's meta (-want +got):\n%s", diff)
	}
}

// testSpecialID: ids are opaque strings; URL and query syntax in them is
// literal (§15.4).
func testSpecialID(t *testing.T, e *env) {
	const id = `w/1?x=#"\ü%2F..`
	const text = "marmoset special identifier"
	if diff := cmp.Diff([]string{id}, e.add(t, doc(id, text))); diff != "" {
		t.Fatalf("ids (-want +got):\n%s", diff)
	}
	if hits := e.find(t, "marmoset", text); countID(hits, id) != 1 {
		t.Errorf("hits %q, want %q once", hitIDs(hits), id)
	}
	if n := e.del(t, id); n != 1 {
		t.Errorf("deleted = %d, want 1", n)
	}
}

// testLongID: ids up to 512 bytes are accepted; longer ones are -32602.
func testLongID(t *testing.T, e *env) {
	ok := strings.Repeat("é", 256) // 512 bytes
	if diff := cmp.Diff([]string{ok}, e.add(t, doc(ok, "long identifier"))); diff != "" {
		t.Errorf("512-byte id (-want +got):\n%s", diff)
	}
	_, rerr := e.call(t, rcp.MethodIndexAdd, P{"documents": []map[string]any{doc(ok+"x", "too long")}})
	wantError(t, rerr, rcp.CodeInvalidParams, "", "")
}
