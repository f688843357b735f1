package retrieval_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/internal/session"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// shortFirst is a FAKE reranker for tests that scores deterministically:
// minus the passage's length in bytes, so the shortest passage wins — an
// order BM25 does not produce, which the tests compute on their own.
type shortFirst struct {
	mu    sync.Mutex
	calls [][]string
	fail  error
}

func (s *shortFirst) Rerank(_ context.Context, _ string, passages []string) ([]float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, slices.Clone(passages))
	if s.fail != nil {
		return nil, s.fail
	}
	out := make([]float64, len(passages))
	for i, p := range passages {
		out[i] = -float64(len(p))
	}
	return out, nil
}

// recordingSink is a FAKE feedback sink that keeps what it was given.
type recordingSink struct {
	mu  sync.Mutex
	evs []retrieval.FeedbackEvent
}

func (r *recordingSink) Record(_ context.Context, ev retrieval.FeedbackEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
	return nil
}

type callerKey struct{}

type extras struct {
	rr       *shortFirst
	maxCand  int
	sessions bool
	shared   session.Shared // with sessions: the store replicas share
	sink     *recordingSink
}

func newExtrasEngine(t *testing.T, x extras) *retrieval.Engine {
	t.Helper()
	opts := retrieval.Options{Name: "test", Version: "0", CursorKeys: [][]byte{[]byte("k")},
		Caller: func(ctx context.Context) string { s, _ := ctx.Value(callerKey{}).(string); return s }}
	if x.rr != nil {
		opts.Reranker = x.rr
		opts.Policy.Reranker = &capability.RerankerFacts{Method: "cross-encoder", Models: []string{"short-first"}, MaxCandidates: x.maxCand, Proof: "test"}
	}
	if x.sessions {
		opts.Sessions = session.NewTiered(session.New(session.Options{}), x.shared, "")
		opts.Policy.Session = &capability.SessionFacts{Dedup: true, TTLSeconds: 1800}
	}
	if x.sink != nil {
		opts.Feedback, opts.Policy.Feedback = x.sink, true
	}
	e, err := retrieval.NewEngine(context.Background(), newStore(nil, false, ""), opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func retrieveOK(t *testing.T, e *retrieval.Engine, ctx context.Context, p string) *rcp.RetrieveResult {
	t.Helper()
	var params rcp.RetrieveParams
	if err := json.Unmarshal([]byte(p), &params); err != nil {
		t.Fatal(err)
	}
	res, err := e.Retrieve(ctx, &params)
	if err != nil {
		t.Fatalf("retrieve %s: %v", p, err)
	}
	return res
}

func retrieveErr(e *retrieval.Engine, p string) error {
	var params rcp.RetrieveParams
	if err := json.Unmarshal([]byte(p), &params); err != nil {
		return err
	}
	_, err := e.Retrieve(context.Background(), &params)
	return err
}

func corpusText(id string) string {
	for _, d := range corpus {
		if d.id == id {
			return d.text
		}
	}
	return ""
}

// TestRerankFunnel: candidateK → rerank.topN → k (§7.7). The oracle is
// the engine's own sparse ranking without rerank, cut to topN and sorted
// by the fake reranker's rule (shortest text first) in the test.
func TestRerankFunnel(t *testing.T) {
	rr := &shortFirst{}
	e := newExtrasEngine(t, extras{rr: rr, maxCand: 50})
	caps := e.Capabilities()
	if caps.Rerank == nil || !caps.Retrieve.RerankBuiltin || caps.Rerank.Methods[0] != "cross-encoder" || caps.Rerank.MaxCandidates != 50 {
		t.Fatalf("rerank not advertised as configured: %+v / %+v", caps.Rerank, caps.Retrieve)
	}
	ctx := context.Background()
	base := retrieveOK(t, e, ctx, `{"query":"solar electricity","k":4,"candidateK":8}`)
	top4 := hitIDs(base.Hits)
	want := slices.Clone(top4)
	sort.SliceStable(want, func(a, b int) bool { return len(corpusText(want[a])) < len(corpusText(want[b])) })
	want = want[:2]

	res := retrieveOK(t, e, ctx, `{"query":"solar electricity","k":2,"candidateK":8,"rerank":{"method":"cross-encoder","topN":4}}`)
	if got := hitIDs(res.Hits); !slices.Equal(got, want) {
		t.Errorf("reranked ids %v, want %v (top-4 by BM25 %v, shortest first)", got, want, top4)
	}
	if n := len(rr.calls); n != 1 || len(rr.calls[0]) != 4 {
		t.Fatalf("reranker calls %v, want one call with 4 passages", rr.calls)
	}
	for _, h := range res.Hits {
		sc := map[string]float64{}
		for _, s := range h.Scores {
			sc[s.Stage] = s.Score
		}
		if h.Score != -float64(len(corpusText(h.ID))) || sc["rerank"] != h.Score {
			t.Errorf("%s: score %g, scores %v; want the reranker's %d", h.ID, h.Score, sc, -len(corpusText(h.ID)))
		}
		if _, ok := sc["sparse"]; !ok {
			t.Errorf("%s: recall score missing from scores %v", h.ID, sc)
		}
	}
	if res.Usage.Reranked == nil || *res.Usage.Reranked != 4 {
		t.Errorf("usage.reranked %v, want 4", res.Usage.Reranked)
	}
	if res.Meta["scoreScale"] != "unbounded" || res.Meta["scoreFloor"] != nil {
		t.Errorf("score label %v, want unbounded without a floor", res.Meta)
	}
	if !slices.ContainsFunc(res.Usage.Notes, func(n string) bool { return strings.Contains(n, "reranked the top 4") }) {
		t.Errorf("notes %v do not say what was reranked", res.Usage.Notes)
	}
}

func TestRerankOptionErrors(t *testing.T) {
	e := newExtrasEngine(t, extras{rr: &shortFirst{}, maxCand: 3})
	none := newExtrasEngine(t, extras{})
	tests := []struct {
		name          string
		e             *retrieval.Engine
		req           string
		code          rcp.Code
		option, field string
	}{
		{"topN below k", e, `{"query":"solar","k":3,"rerank":{"topN":2}}`, rcp.CodeInvalidParams, "", "rerank.topN"},
		{"candidateK below topN", e, `{"query":"solar","k":1,"candidateK":2,"rerank":{"topN":3}}`, rcp.CodeInvalidParams, "", "candidateK"},
		{"method not advertised", e, `{"query":"solar","k":1,"rerank":{"method":"colbert"}}`, rcp.CodeOptionUnsupported, "colbert", ""},
		{"model not advertised", e, `{"query":"solar","k":1,"rerank":{"model":"bge-large"}}`, rcp.CodeOptionUnsupported, "bge-large", ""},
		{"no reranker configured", none, `{"query":"solar","k":1,"rerank":{"method":"cross-encoder"}}`, rcp.CodeOptionUnsupported, "cross-encoder", ""},
		{"sessionId too long", e, `{"query":"solar","k":1,"sessionId":"` + strings.Repeat("s", 257) + `"}`, rcp.CodeInvalidParams, "", "sessionId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, retrieveErr(tc.e, tc.req), tc.code, tc.option, tc.field)
		})
	}
	// Clamped, not rejected: topN to maxCandidates 3, and k with it.
	res := retrieveOK(t, e, context.Background(), `{"query":"solar electricity","k":5,"rerank":{}}`)
	if len(res.Hits) > 3 || res.Usage.Reranked == nil || *res.Usage.Reranked != 3 {
		t.Errorf("k=5 over maxCandidates 3: %d hits, reranked %v", len(res.Hits), res.Usage.Reranked)
	}
	// rerank:false runs without the stage.
	if res := retrieveOK(t, e, context.Background(), `{"query":"solar","k":2,"rerank":false}`); res.Usage.Reranked != nil {
		t.Errorf("rerank:false reranked %v", *res.Usage.Reranked)
	}
	// A failing reranker fails the retrieve with its code.
	bad := newExtrasEngine(t, extras{rr: &shortFirst{fail: rcp.Retryable(rcp.CodeBackendUnavailable, 0, "reranker unreachable")}, maxCand: 10})
	var re *rcp.Error
	if err := retrieveErr(bad, `{"query":"solar","k":1,"rerank":{}}`); !errors.As(err, &re) || re.Code != rcp.CodeBackendUnavailable {
		t.Errorf("failing reranker: %v, want -32010", err)
	}
}

// TestRerankMethod drives rerank through the server with the
// schema-validating client (§7.6).
func TestRerankMethod(t *testing.T) {
	e := newExtrasEngine(t, extras{rr: &shortFirst{}, maxCand: 4})
	c := rcptest.NewClient(t, e)
	defer c.Close()
	initialize(t, c, map[string]any{})
	passages := []string{"a long passage here", "tiny", "medium one"}
	res := call[rcp.RerankResult](t, c, rcp.MethodRerank, map[string]any{"query": "q", "passages": passages, "topN": 2, "method": "cross-encoder"})
	for i, p := range passages {
		if res.Scores[i] != -float64(len(p)) {
			t.Errorf("scores[%d] = %g, want %d", i, res.Scores[i], -len(p))
		}
	}
	if !slices.Equal(res.Order, []int{1, 2}) {
		t.Errorf("order %v, want [1 2] (shortest first, cut to topN 2)", res.Order)
	}
	tests := []struct {
		name          string
		params        map[string]any
		code          rcp.Code
		option, field string
	}{
		{"no passages", map[string]any{"query": "q"}, rcp.CodeInvalidParams, "", "passages"},
		{"empty passages", map[string]any{"query": "q", "passages": []string{}}, rcp.CodeInvalidParams, "", "passages"},
		{"over maxCandidates", map[string]any{"query": "q", "passages": []string{"a", "b", "c", "d", "e"}}, rcp.CodeInvalidParams, "", "passages"},
		{"no query", map[string]any{"passages": []string{"a"}}, rcp.CodeInvalidParams, "", "query"},
		{"topN zero", map[string]any{"query": "q", "passages": []string{"a"}, "topN": 0}, rcp.CodeInvalidParams, "", "topN"},
		{"colbert", map[string]any{"query": "q", "passages": []string{"a"}, "method": "colbert"}, rcp.CodeOptionUnsupported, "colbert", ""},
		{"image passage", map[string]any{"query": "q", "passages": []any{map[string]any{"type": "image", "uri": "x"}}}, rcp.CodeOptionUnsupported, "image", ""},
		{"passage too long", map[string]any{"query": "q", "passages": []string{strings.Repeat("x", retrieval.MaxPassageChars+1)}}, rcp.CodeInvalidParams, "", "passages[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Call(context.Background(), rcp.MethodRerank, tc.params)
			if err == nil {
				t.Fatal("accepted")
			}
			wantErr(t, err, tc.code, tc.option, tc.field)
		})
	}
	// Without a reranker, rerank is not advertised and the server says so.
	c2 := rcptest.NewClient(t, newExtrasEngine(t, extras{}))
	defer c2.Close()
	if init := initialize(t, c2, map[string]any{}); init.Capabilities.Rerank != nil || init.Capabilities.Retrieve.RerankBuiltin {
		t.Fatalf("rerank advertised without a reranker: %+v", init.Capabilities.Rerank)
	}
	if _, err := c2.Call(context.Background(), rcp.MethodRerank, map[string]any{"query": "q", "passages": []string{"a"}}); err == nil || err.Code != rcp.CodeCapabilityMissing {
		t.Errorf("rerank without the capability: %v, want -32003", err)
	}
}

// TestSessionDedup: within one session (and one caller) a hit is returned
// once across calls and pages; another session or another caller with the
// same session id is unaffected. The oracle is the ranking without a
// session.
func TestSessionDedup(t *testing.T) {
	e := newExtrasEngine(t, extras{sessions: true})
	if c := e.Capabilities().Session; c == nil || !c.Dedup || c.TTLSeconds != 1800 {
		t.Fatalf("session capability %+v", c)
	}
	alice := context.WithValue(context.Background(), callerKey{}, "alice")
	bob := context.WithValue(context.Background(), callerKey{}, "bob")
	full := hitIDs(retrieveOK(t, e, alice, `{"query":"solar electricity","k":6}`).Hits)
	if len(full) < 6 {
		t.Fatalf("need 6 hits, got %v", full)
	}
	first := hitIDs(retrieveOK(t, e, alice, `{"query":"solar electricity","k":2,"sessionId":"s1"}`).Hits)
	second := retrieveOK(t, e, alice, `{"query":"solar electricity","k":2,"sessionId":"s1"}`)
	if !slices.Equal(first, full[:2]) || !slices.Equal(hitIDs(second.Hits), full[2:4]) {
		t.Errorf("session s1: %v then %v, want %v then %v", first, hitIDs(second.Hits), full[:2], full[2:4])
	}
	if !slices.ContainsFunc(second.Usage.Notes, func(n string) bool { return strings.Contains(n, "2 hits already returned") }) {
		t.Errorf("notes %v do not report the suppression", second.Usage.Notes)
	}
	// A page of the session: the cursor continues after what was served.
	page := retrieveOK(t, e, alice, `{"query":"solar electricity","k":1,"sessionId":"s2"}`)
	next := retrieveOK(t, e, alice, `{"query":"solar electricity","k":1,"sessionId":"s2","cursor":"`+page.NextCursor+`"}`)
	if !slices.Equal(hitIDs(page.Hits), full[:1]) || !slices.Equal(hitIDs(next.Hits), full[1:2]) {
		t.Errorf("pages in s2: %v then %v, want %v then %v", hitIDs(page.Hits), hitIDs(next.Hits), full[:1], full[1:2])
	}
	// Bob's s1 is not Alice's s1; no session at all is unaffected.
	if got := hitIDs(retrieveOK(t, e, bob, `{"query":"solar electricity","k":2,"sessionId":"s1"}`).Hits); !slices.Equal(got, full[:2]) {
		t.Errorf("bob's s1 %v, want %v (alice's session must not leak)", got, full[:2])
	}
	if got := hitIDs(retrieveOK(t, e, alice, `{"query":"solar electricity","k":2}`).Hits); !slices.Equal(got, full[:2]) {
		t.Errorf("no session %v, want %v", got, full[:2])
	}
	// Without a session store sessionId is a hint that changes nothing.
	plain := newExtrasEngine(t, extras{})
	for range 2 {
		if got := hitIDs(retrieveOK(t, plain, alice, `{"query":"solar electricity","k":2,"sessionId":"s1"}`).Hits); !slices.Equal(got, full[:2]) {
			t.Errorf("without session support: %v, want %v", got, full[:2])
		}
	}
}

func TestFeedback(t *testing.T) {
	sink := &recordingSink{}
	e := newExtrasEngine(t, extras{sink: sink})
	c := rcptest.NewClient(t, e)
	defer c.Close()
	if init := initialize(t, c, map[string]any{}); init.Capabilities.Feedback == nil {
		t.Fatal("feedback not advertised")
	}
	res := call[rcp.FeedbackResult](t, c, rcp.MethodFeedback, map[string]any{"sessionId": "s", "query": "q",
		"signals": []map[string]any{{"hitId": "d01", "helpful": true, "reward": -1}, {"hitId": 7, "poisonSuspected": true}}})
	if res.Accepted != 2 {
		t.Errorf("accepted %d, want 2", res.Accepted)
	}
	long := strings.Repeat("h", retrieval.MaxHitIDChars+1)
	many := make([]map[string]any, retrieval.MaxFeedbackSignals+1)
	for i := range many {
		many[i] = map[string]any{"hitId": "x"}
	}
	tests := []struct {
		name   string
		params map[string]any
		field  string
	}{
		{"signals missing", map[string]any{"query": "q"}, "signals"},
		{"too many signals", map[string]any{"signals": many}, "signals"},
		{"hitId missing", map[string]any{"signals": []map[string]any{{"used": true}}}, "signals[0].hitId"},
		{"hitId a bool", map[string]any{"signals": []map[string]any{{"hitId": "a"}, {"hitId": false}}}, "signals[1].hitId"},
		{"hitId too long", map[string]any{"signals": []map[string]any{{"hitId": long}}}, "signals[0].hitId"},
		{"reward above 1", map[string]any{"signals": []map[string]any{{"hitId": "a", "reward": 1.5}}}, "signals[0].reward"},
		{"used not a bool", map[string]any{"signals": []map[string]any{{"hitId": "a", "used": "yes"}}}, "signals[0].used"},
		{"sessionId too long", map[string]any{"sessionId": strings.Repeat("s", 300), "signals": []map[string]any{}}, "sessionId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Call(context.Background(), rcp.MethodFeedback, tc.params)
			if err == nil {
				t.Fatal("accepted")
			}
			wantErr(t, err, rcp.CodeInvalidParams, "", tc.field)
		})
	}
	// The sink sees the caller and the tenant the access layer scoped.
	ctx := adapters.WithTenant(context.WithValue(context.Background(), callerKey{}, "key-a"), adapters.Tenant{Name: "acme"})
	if _, err := e.Feedback(ctx, &rcp.FeedbackParams{Signals: []rcp.FeedbackSignal{{HitID: json.RawMessage(`"d02"`)}}}); err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.evs) != 2 || sink.evs[0].SessionID != "s" || len(sink.evs[0].Signals) != 2 {
		t.Fatalf("sink events %+v", sink.evs)
	}
	if last := sink.evs[1]; last.Caller != "key-a" || last.Tenant != "acme" {
		t.Errorf("event tagged caller %q tenant %q, want key-a/acme", last.Caller, last.Tenant)
	}
}

// downShared is a fake shared session store (named as one) that never
// answers: what the replica sees while the real store is down.
type downShared struct{}

func (downShared) Seen(context.Context, string, string, []string, time.Duration) ([]bool, error) {
	return nil, errors.New("fake: store down")
}

func (downShared) Add(context.Context, string, string, []string, time.Duration, int, int) error {
	return errors.New("fake: store down")
}

// TestSessionSharedDown: with the shared store down, a session still
// suppresses what this replica served (its own store is written through),
// and each answer says once in usage.notes that suppression covered this
// replica alone.
func TestSessionSharedDown(t *testing.T) {
	e := newExtrasEngine(t, extras{sessions: true, shared: downShared{}})
	ctx := context.WithValue(context.Background(), callerKey{}, "alice")
	full := hitIDs(retrieveOK(t, e, ctx, `{"query":"solar electricity","k":4}`).Hits)
	first := retrieveOK(t, e, ctx, `{"query":"solar electricity","k":2,"sessionId":"s1"}`)
	second := retrieveOK(t, e, ctx, `{"query":"solar electricity","k":2,"sessionId":"s1"}`)
	if !slices.Equal(hitIDs(first.Hits), full[:2]) || !slices.Equal(hitIDs(second.Hits), full[2:4]) {
		t.Fatalf("pages %v then %v, want %v then %v", hitIDs(first.Hits), hitIDs(second.Hits), full[:2], full[2:4])
	}
	for i, res := range []*rcp.RetrieveResult{first, second} {
		n := 0
		for _, note := range res.Usage.Notes {
			if strings.HasPrefix(note, "session: the shared state store did not answer") {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("answer %d notes %v: want the fallback said once", i, res.Usage.Notes)
		}
	}
	if plain := retrieveOK(t, e, ctx, `{"query":"solar electricity","k":2}`); len(plain.Usage.Notes) != 0 {
		t.Fatalf("a retrieve without sessionId notes %v, want none", plain.Usage.Notes)
	}
}
