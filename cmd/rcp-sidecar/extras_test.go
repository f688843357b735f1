package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/reranker/rerankertest"
)

// overlapReranker is a FAKE cross-encoder service (rerankertest) scoring
// by word overlap, inverted when wrong is set to fail the start-up check.
func overlapReranker(t *testing.T, wrong bool) string {
	s := rerankertest.NewServer(t)
	s.Invert.Store(wrong)
	return s.URL
}

const extrasCorpus = `{"_id":"p1","title":"t","text":"solar power from panels on the roof of a house"}
{"_id":"p2","title":"t","text":"solar panels"}
{"_id":"p3","title":"t","text":"panels of experts discuss solar power policy and power prices"}
{"_id":"p4","title":"t","text":"the power of solar storage with home batteries"}
{"_id":"p5","title":"t","text":"wind power"}
`

func extrasConfig(t *testing.T, rerankURL string) string {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.jsonl")
	writeFile(t, corpus, extrasCorpus)
	cfg := filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, "backends:\n  - {name: docs, engine: memory, settings: {corpus: "+corpus+"}}\n"+
		"reranker: {url: \""+rerankURL+"\", model: overlap-test, max_candidates: 20, retries: 0}\n"+
		"session: {ttl_seconds: 600}\nfeedback: {enabled: true}\n"+
		"access:\n  keys:\n"+
		"    - {id: alice, hash: \""+keyHash("alice-key-0123456789")+"\"}\n"+
		"    - {id: bob, hash: \""+keyHash("bob-key-0123456789")+"\"}\n")
	return cfg
}

// TestRerankerStartupCheck: the reranker section is advertised only when
// its start-up check passes, and probe says why either way.
func TestRerankerStartupCheck(t *testing.T) {
	for _, wrong := range []bool{false, true} {
		r, _ := probeJSON(t, "--config", extrasConfig(t, overlapReranker(t, wrong)))
		_, advertised := r.Capabilities["rerank"]
		var why string
		for _, rs := range r.Reasons {
			if rs.Capability == "rerank" {
				why = rs.Why
			}
		}
		if advertised == wrong {
			t.Errorf("wrong-ranking reranker=%v: rerank advertised=%v (%s)", wrong, advertised, why)
		}
		if want := map[bool]string{false: "start-up check passed", true: "start-up check failed"}[wrong]; !strings.Contains(why, want) {
			t.Errorf("probe reason %q, want it to say %q", why, want)
		}
		if _, ok := r.Capabilities["session"]; !ok {
			t.Error("session not advertised with a session section")
		}
		if _, ok := r.Capabilities["feedback"]; !ok {
			t.Error("feedback not advertised with feedback.enabled")
		}
	}
}

// TestServeRerankSessionFeedback drives the binary over HTTP with two API
// keys: the rerank funnel against the sparse ranking re-sorted by the
// test server's rule, sessions that one key cannot see into, feedback.
func TestServeRerankSessionFeedback(t *testing.T) {
	base := startServe(t, "--config", extrasConfig(t, overlapReranker(t, false)))
	const alice, bob = "alice-key-0123456789", "bob-key-0123456789"
	const q = "solar power panels"
	retrieve := func(key string, params map[string]any) rcp.RetrieveResult {
		t.Helper()
		params["query"] = q
		raw, rerr := rpcAs(t, base, key, "retrieve", params)
		if rerr != nil {
			t.Fatalf("retrieve %v: %+v", params, rerr)
		}
		var r rcp.RetrieveResult
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	plain := retrieve(alice, map[string]any{"k": 4, "mode": "sparse"})
	want := slices.Clone(plain.Hits)
	sort.SliceStable(want, func(a, b int) bool {
		return rerankertest.Overlap(q, want[a].Text) > rerankertest.Overlap(q, want[b].Text)
	})
	if slices.Equal(ids(want[:2]), ids(plain.Hits[:2])) {
		t.Fatalf("corpus does not tell reranking apart: BM25 %v, overlap %v", ids(plain.Hits), ids(want))
	}
	got := retrieve(alice, map[string]any{"k": 2, "mode": "sparse", "rerank": map[string]any{"topN": 4}})
	if len(got.Hits) != 2 || got.Hits[0].ID != want[0].ID || got.Hits[1].ID != want[1].ID {
		t.Errorf("reranked %v, want %v first", ids(got.Hits), ids(want))
	}
	if got.Hits[0].Score != rerankertest.Overlap(q, want[0].Text) || got.Usage.Reranked == nil || *got.Usage.Reranked != 4 {
		t.Errorf("score %g reranked %v", got.Hits[0].Score, got.Usage.Reranked)
	}
	first := retrieve(alice, map[string]any{"k": 2, "sessionId": "trip"})
	again := retrieve(alice, map[string]any{"k": 2, "sessionId": "trip"})
	other := retrieve(bob, map[string]any{"k": 2, "sessionId": "trip"})
	if slices.ContainsFunc(again.Hits, func(h rcp.Hit) bool { return slices.Contains(ids(first.Hits), h.ID) }) {
		t.Errorf("alice's session returned %v again after %v", ids(again.Hits), ids(first.Hits))
	}
	if !slices.Equal(ids(other.Hits), ids(first.Hits)) {
		t.Errorf("bob's session %v, want %v: alice's session must not reach bob", ids(other.Hits), ids(first.Hits))
	}
	raw, rerr := rpcAs(t, base, bob, "feedback", map[string]any{"sessionId": "trip", "signals": []map[string]any{{"hitId": "p1", "cited": true}}})
	var fb rcp.FeedbackResult
	if rerr != nil || json.Unmarshal(raw, &fb) != nil || fb.Accepted != 1 {
		t.Errorf("feedback: %s %+v", raw, rerr)
	}
	wantMetric := `rcp_feedback_signals_total{engine="docs",kind="cited"} 1`
	if st, body := get(t, strings.TrimSuffix(base, "/rcp")+"/metrics", bob); st != http.StatusOK || !strings.Contains(body, wantMetric) {
		t.Errorf("/metrics: HTTP %d, want %s", st, wantMetric)
	}
	raw, rerr = rpcAs(t, base, bob, "rerank", map[string]any{"query": q, "passages": []string{"wind", "solar power panels"}})
	var rr rcp.RerankResult
	if rerr != nil || json.Unmarshal(raw, &rr) != nil || !slices.Equal(rr.Order, []int{1, 0}) || rr.Scores[1] != 3 {
		t.Errorf("rerank: %s %+v", raw, rerr)
	}
}

func ids(hs []rcp.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

// TestFeedbackIndexedPerTenant: feedback sent over HTTP by a tenant key
// lands in a real Elasticsearch index tagged with that key and tenant,
// and another key's signals carry its own tags (access → engine → sink).
func TestFeedbackIndexedPerTenant(t *testing.T) {
	es := esURL(t)
	index := uniqueName("rcp-feedback-cmd")
	t.Cleanup(func() { engineDo(t, es, http.MethodDelete, "/"+index, "") })
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.jsonl")
	writeFile(t, corpus, `{"_id":"a1","title":"t","text":"rocket report","tenant":"acme"}`+"\n"+
		`{"_id":"g1","title":"t","text":"rocket report","tenant":"globex"}`+"\n")
	cfg := filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, "backends:\n  - {name: docs, engine: memory, settings: {corpus: "+corpus+"}}\n"+
		"feedback: {enabled: true, index: {url: \""+es+"\", index: "+index+", timeout: 30s}}\n"+
		"access:\n  keys:\n"+
		"    - {id: acme-key, tenant: acme, filter: {field: tenant, op: eq, value: acme}, hash: \""+keyHash("acme-0123456789abc")+"\"}\n"+
		"    - {id: ops, hash: \""+keyHash("ops-0123456789abcd")+"\"}\n")
	base := startServe(t, "--config", cfg)
	for _, c := range []struct{ key, hit string }{{"acme-0123456789abc", "a1"}, {"ops-0123456789abcd", "g1"}} {
		raw, rerr := rpcAs(t, base, c.key, "feedback", map[string]any{"sessionId": "s", "signals": []map[string]any{{"hitId": c.hit, "helpful": true}}})
		if rerr != nil {
			t.Fatalf("feedback: %+v", rerr)
		}
		var fb rcp.FeedbackResult
		if json.Unmarshal(raw, &fb) != nil || fb.Accepted != 1 {
			t.Fatalf("feedback answer %s", raw)
		}
	}
	engineDo(t, es, http.MethodPost, "/"+index+"/_refresh", "")
	st, body := engineDo(t, es, http.MethodPost, "/"+index+"/_search", `{"size":10,"sort":[{"hit_id.keyword":"asc"}]}`)
	var sr struct {
		Hits struct {
			Hits []struct {
				Source map[string]any `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if st != http.StatusOK || json.Unmarshal([]byte(body), &sr) != nil || len(sr.Hits.Hits) != 2 {
		t.Fatalf("search %s: HTTP %d %s", index, st, body)
	}
	a, g := sr.Hits.Hits[0].Source, sr.Hits.Hits[1].Source
	if a["hit_id"] != "a1" || a["key"] != "acme-key" || a["tenant"] != "acme" || a["engine"] != "docs" {
		t.Errorf("acme's signal tagged %v", a)
	}
	if g["hit_id"] != "g1" || g["key"] != "ops" || g["tenant"] != nil {
		t.Errorf("ops's signal tagged %v", g)
	}
}
