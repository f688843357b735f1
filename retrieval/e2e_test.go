package retrieval_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// These tests drive the Engine over the memory store through the real
// server with the schema-validating client (every frame is checked
// against rcp-1.0.json by rcptest).

func initialize(t *testing.T, c *rcptest.Client, params map[string]any) *rcp.InitializeResult {
	t.Helper()
	params["protocolVersion"] = 1
	raw, err := c.Call(context.Background(), rcp.MethodInitialize, params)
	if err != nil {
		t.Fatal(err)
	}
	var res rcp.InitializeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	return &res
}

func call[R any](t *testing.T, c *rcptest.Client, method string, params any) *R {
	t.Helper()
	raw, err := c.Call(context.Background(), method, params)
	if err != nil {
		t.Fatalf("%s %v: %v", method, params, err)
	}
	var r R
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestUnicodeQuery: §4.6 full Unicode in query and text. A query mixing
// CJK, an emoji and RTL Hebrew retrieves the one document sharing those
// words, and the text comes back byte-identical.
func TestUnicodeQuery(t *testing.T) {
	e, store := newEngine(t, setup{})
	const body = "太陽光発電 ☀️ は אנרגיית שמש — طاقة شمسية"
	store.Add(adapters.Document{ID: "uni", Text: body, Meta: map[string]any{"title": "多言語 🌍"}},
		adapters.Document{ID: "wind-ja", Text: "風力発電 🌬️ は 風 の エネルギー"})
	c := rcptest.NewClient(t, e)
	initialize(t, c, map[string]any{})
	for _, q := range []string{"太陽光 ☀️ שמש", "شمسية", "☀️ 太陽"} {
		res := call[rcp.RetrieveResult](t, c, rcp.MethodRetrieve, map[string]any{"query": q, "k": 3, "mode": "sparse"})
		if len(res.Hits) == 0 || res.Hits[0].ID != "uni" {
			t.Fatalf("%q: hits %v, want uni first", q, hitIDs(res.Hits))
		}
		if res.Hits[0].Text != body || res.Hits[0].Citation.Title != "多言語 🌍" {
			t.Errorf("%q: text/title not preserved: %+v", q, res.Hits[0])
		}
	}
}

// TestConformanceHonest: _meta.conformance matches what is served (§14).
// The memory engine serves retrieve with filter and citations (L1) and
// pagination, streaming, log and determinism (L2, §14.3), sparse-only or
// with an embedder; the L1 claims are each checked.
func TestConformanceHonest(t *testing.T) {
	sparse, _ := newEngine(t, setup{})
	c := rcptest.NewClient(t, sparse)
	if got := initialize(t, c, map[string]any{}).Meta["conformance"]; got != "L2" {
		t.Errorf("sparse-only memory declares %v, want L2", got)
	}
	full, _ := newEngine(t, setup{emb: true})
	c = rcptest.NewClient(t, full)
	init := initialize(t, c, map[string]any{})
	if init.Meta["conformance"] != "L2" {
		t.Fatalf("memory+embedder declares %v, want L2", init.Meta["conformance"])
	}
	caps := init.Capabilities
	if caps.Filter == nil || caps.Citations == nil || caps.Retrieve == nil {
		t.Fatalf("L1 without filter/citations/retrieve: %+v", caps)
	}
	for _, mode := range []string{"dense", "sparse", "hybrid"} {
		all := call[rcp.RetrieveResult](t, c, rcp.MethodRetrieve, map[string]any{"query": "solar electricity", "k": 3, "mode": mode,
			"filter": map[string]any{"field": "lang", "op": "eq", "value": "en"}})
		if len(all.Hits) != 3 {
			t.Fatalf("%s: k=3 gave %d hits", mode, len(all.Hits))
		}
		nonIncreasing(t, all.Hits)
		for _, h := range all.Hits {
			if h.Meta["lang"] != "en" || h.Citation == nil {
				t.Errorf("%s: hit %s ignores the filter or lacks a citation", mode, h.ID)
			}
		}
		floor := all.Hits[1].Score
		cut := call[rcp.RetrieveResult](t, c, rcp.MethodRetrieve, map[string]any{"query": "solar electricity", "k": 3, "mode": mode,
			"filter": map[string]any{"field": "lang", "op": "eq", "value": "en"}, "minScore": floor})
		for _, h := range cut.Hits {
			if h.Score < floor {
				t.Errorf("%s: minScore %v returned %v", mode, floor, h.Score)
			}
		}
		if len(cut.Hits) == 0 || len(cut.Hits) >= 3 && all.Hits[2].Score < floor {
			t.Errorf("%s: minScore kept %d hits", mode, len(cut.Hits))
		}
	}
}

// TestEmbedThroughServer: inputs and the legacy texts; a bare string is
// exactly a text block; a non-text block is -32005 naming its type (§4.8, §7.3).
func TestEmbedThroughServer(t *testing.T) {
	e, _ := newEngine(t, setup{emb: true})
	c := rcptest.NewClient(t, e)
	initialize(t, c, map[string]any{})
	a := call[struct{ Vectors [][]float32 }](t, c, rcp.MethodEmbed, map[string]any{"inputs": []any{"solar power"}})
	b := call[struct{ Vectors [][]float32 }](t, c, rcp.MethodEmbed, map[string]any{"texts": []any{map[string]any{"type": "text", "text": "solar power"}}})
	if len(a.Vectors) != 1 || !slices.Equal(a.Vectors[0], b.Vectors[0]) {
		t.Errorf("bare string and text block differ: %v vs %v", a.Vectors, b.Vectors)
	}
	// rcptest checks every f32-base64 blob decodes to dimension×4 bytes (§7.3.1).
	f := call[rcp.EmbedResult](t, c, rcp.MethodEmbed, map[string]any{"inputs": []any{"solar power", "wind"}, "encoding": "f32-base64"})
	if f.Encoding != "f32-base64" || f.Dimension != dim || len(f.Vectors.([]any)) != 2 {
		t.Errorf("f32-base64 result %+v", f)
	}
	_, err := c.Call(context.Background(), rcp.MethodEmbed, map[string]any{"inputs": []any{"x", map[string]any{"type": "audio", "mimeType": "audio/wav", "uri": "file:///a.wav"}}})
	if err == nil || err.Code != rcp.CodeOptionUnsupported || err.Data == nil || err.Data.Option != "audio" {
		t.Errorf("audio block: %+v", err)
	}
}

// TestLogs: notifications/log only when the server advertises log and the
// client opted in (log capability or _meta.logLevel), at or above its
// level (§7.1, §17.1); the Engine's debug line says what retrieve did.
func TestLogs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		serverLog bool
		init      map[string]any
		reqMeta   map[string]any
		want      bool
	}{
		{"opted in at debug", true, map[string]any{"capabilities": map[string]any{"log": map[string]any{}}, "_meta": map[string]any{"logLevel": "debug"}}, nil, true},
		{"per-request logLevel", true, map[string]any{}, map[string]any{"logLevel": "debug"}, true},
		{"client did not opt in", true, map[string]any{}, nil, false},
		{"default level info hides debug", true, map[string]any{"capabilities": map[string]any{"log": map[string]any{}}}, nil, false},
		{"server does not advertise log", false, map[string]any{"capabilities": map[string]any{"log": map[string]any{}}, "_meta": map[string]any{"logLevel": "debug"}}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newEngine(t, setup{emb: true, policy: capability.Policy{Log: tc.serverLog}})
			c := rcptest.NewClient(t, e)
			initialize(t, c, tc.init)
			p := map[string]any{"query": "solar", "k": 2}
			if tc.reqMeta != nil {
				p["_meta"] = tc.reqMeta
			}
			call[rcp.RetrieveResult](t, c, rcp.MethodRetrieve, p)
			var logs []string
			for _, n := range c.Notifications() {
				if n.Method == rcp.NotifyLog {
					logs = append(logs, string(n.Params))
				}
			}
			got := len(logs) > 0
			if got != tc.want {
				t.Fatalf("logs %v, want any=%v", logs, tc.want)
			}
			if got && (!strings.Contains(logs[0], `"logger":"retrieve"`) || !strings.Contains(logs[0], "mode=hybrid candidates=")) {
				t.Errorf("log line not useful: %s", logs[0])
			}
		})
	}
}

// TestProgress: notifications/progress only with _meta.progressToken AND
// streaming advertised (§9), token echoed, stage names and partial.hits.
func TestProgressGating(t *testing.T) {
	for _, tc := range []struct {
		name      string
		streaming bool
		token     any
		want      bool
	}{
		{"token and streaming", true, "tok", true},
		{"integer token", true, 7, true},
		{"no token", true, nil, false},
		{"streaming not advertised", false, "tok", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newEngine(t, setup{emb: true, policy: capability.Policy{Streaming: tc.streaming}})
			c := rcptest.NewClient(t, e)
			initialize(t, c, map[string]any{})
			p := map[string]any{"query": "solar", "k": 2, "mmr": map[string]any{}}
			if tc.token != nil {
				p["_meta"] = map[string]any{"progressToken": tc.token}
			}
			call[rcp.RetrieveResult](t, c, rcp.MethodRetrieve, p)
			var stages []string
			partial := 0
			for _, n := range c.Notifications() {
				var pp struct {
					ProgressToken json.RawMessage `json:"progressToken"`
					Stage         string          `json:"stage"`
					Partial       *struct{ Hits []rcp.Hit }
				}
				if n.Method != rcp.NotifyProgress || json.Unmarshal(n.Params, &pp) != nil {
					continue
				}
				want, _ := json.Marshal(tc.token)
				if string(pp.ProgressToken) != string(want) {
					t.Errorf("token %s, want %s", pp.ProgressToken, want)
				}
				stages = append(stages, pp.Stage)
				if pp.Partial != nil {
					partial += len(pp.Partial.Hits)
				}
			}
			if got := len(stages) > 0; got != tc.want {
				t.Fatalf("stages %v, want progress=%v", stages, tc.want)
			}
			if tc.want && (!slices.Equal(stages, []string{"recall", "fuse", "diversify"}) || partial == 0) {
				t.Errorf("stages %v partial hits %d", stages, partial)
			}
		})
	}
}

// TestSSEWithEngine: over HTTP with Accept: text/event-stream, progress
// frames come first and exactly one final frame carries the response (§5.2).
func TestSSEWithEngine(t *testing.T) {
	e, _ := newEngine(t, setup{emb: true, policy: capability.Policy{Streaming: true, Log: true}})
	ts := httptest.NewServer(server.New(e, server.Options{}).Handler())
	defer ts.Close()
	body := `{"jsonrpc":"2.0","id":"s1","method":"retrieve","params":{"query":"solar","k":2,"_meta":{"progressToken":"p","logLevel":"debug"}}}`
	req, _ := http.NewRequest("POST", ts.URL+"/rcp/retrieve", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var methods []string
	finals := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		payload, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			if sc.Text() != "" {
				t.Errorf("unexpected SSE line %q", sc.Text())
			}
			continue
		}
		if finals > 0 {
			t.Errorf("frame after the final response: %s", payload)
		}
		if err := rcptest.ValidateFrame([]byte(payload)); err != nil {
			t.Errorf("frame violates the schema: %v\n%s", err, payload)
		}
		fr, derr := jsonrpc.DecodeFrame([]byte(payload))
		if derr != nil {
			t.Fatal(derr)
		}
		if r := fr.Members[0].Response; r != nil {
			finals++
			if r.ID.Raw() != `"s1"` || r.Error != nil || rcptest.ValidateResult(rcp.MethodRetrieve, r.Result) != nil {
				t.Errorf("final frame %s", payload)
			}
			continue
		}
		methods = append(methods, fr.Members[0].Request.Method)
	}
	if finals != 1 || !slices.Contains(methods, rcp.NotifyProgress) || !slices.Contains(methods, rcp.NotifyLog) {
		t.Errorf("finals %d, notifications %v", finals, methods)
	}
}

// TestDeadlineAndCancelThroughServer: a slow engine answers -32014
// (retryable) on the configured deadline or on _meta.deadlineMs, whichever
// is sooner, and -32006 on notifications/cancel (§7.14, §13.1).
func TestDeadlineAndCancelThroughServer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   server.Options
		meta   map[string]any
		cancel bool
		want   rcp.Code
		after  time.Duration
	}{
		{"config deadline", server.Options{Deadline: 3 * time.Second}, nil, false, rcp.CodeTimeout, 3 * time.Second},
		{"meta deadlineMs", server.Options{Deadline: 3 * time.Second}, map[string]any{"deadlineMs": 250}, false, rcp.CodeTimeout, 250 * time.Millisecond},
		{"cancel", server.Options{}, nil, true, rcp.CodeCancelled, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, _ := newEngine(t, setup{emb: true, wrap: func(a adapters.Adapter) adapters.Adapter { return blocking{a} }})
				c := rcptest.NewClientOptions(t, e, tc.opts)
				initialize(t, c, map[string]any{})
				p := map[string]any{"query": "solar", "k": 2}
				if tc.meta != nil {
					p["_meta"] = tc.meta
				}
				start, id := time.Now(), c.NextID()
				errc := make(chan *rcp.Error, 1)
				go func() { _, err := c.Call(context.Background(), rcp.MethodRetrieve, p); errc <- err }()
				synctest.Wait()
				if tc.cancel {
					_ = c.Notify(rcp.NotifyCancel, map[string]any{"id": json.RawMessage(id)})
				}
				err := <-errc
				if err == nil || err.Code != tc.want || time.Since(start) != tc.after {
					t.Fatalf("got %v after %v, want %d after %v", err, time.Since(start), tc.want, tc.after)
				}
				if tc.want == rcp.CodeTimeout && (err.Data == nil || err.Data.Retryable == nil || !*err.Data.Retryable) {
					t.Errorf("timeout not marked retryable: %+v", err.Data)
				}
			})
		})
	}
}
