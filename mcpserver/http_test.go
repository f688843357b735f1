package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/mcpserver"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestUnidentifiedCallRefusedOnceRequired: when the access policy starts
// requiring callers at run time (a reload brings keys), a call that
// arrives without an identity is refused, never run unscoped.
func TestUnidentifiedCallRefusedOnceRequired(t *testing.T) {
	e := engine(t, corpus(4, 5), false, testFields)
	svc := service(t, mcpserver.Options{Engines: []mcpserver.Engine{{Name: "docs", Backend: e}}})
	var required atomic.Bool
	h := svc.Handler(mcpserver.HTTPOptions{Identify: func(*http.Request) *mcpserver.Identity { return nil }, Required: required.Load})
	srv := httptest.NewServer(h)
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, sc := call(t, cs, "search", map[string]any{"query": "sun"}); res.IsError {
		t.Fatalf("open policy: %v", sc)
	}
	required.Store(true)
	res, sc := call(t, cs, "search", map[string]any{"query": "sun"})
	if code, _ := rcpError(t, res, sc); code != int(rcp.CodeUnauthorized) {
		t.Fatalf("unidentified call under a policy that requires callers: code %d", code)
	}
}

// TestHTTPProgressAndClosedStream: over Streamable HTTP, which keeps no
// sessions, a call's progress reaches the client on the call's own
// stream, and a client that gives up on the call (its stream closes)
// ends the engine call — with the sessionless protocol and with the
// initialize-handshake ones.
func TestHTTPProgressAndClosedStream(t *testing.T) {
	for _, version := range []string{"", "2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run("protocol "+version, func(t *testing.T) {
			e := engine(t, corpus(2, 10), false, testFields)
			b := &blocking{Backend: e, entered: make(chan struct{}), ended: make(chan error, 1)}
			svc := service(t, mcpserver.Options{Engines: []mcpserver.Engine{{Name: "docs", Backend: b}}})
			srv := httptest.NewServer(svc.Handler(mcpserver.HTTPOptions{}))
			defer srv.Close()
			got := make(chan string, 8)
			cl := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					if !strings.Contains(r.Params.Message, "recall") {
						return
					}
					select {
					case got <- r.Params.Message:
					default:
					}
				}})
			cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			cancelMidCall(t, cs, b, got)
		})
	}
}

// TestRefuseWriteOffered: RefuseWrite is offered exactly the requests of
// a read-only caller that call a write tool (alone or in a batch, under
// the engine-suffixed names of a multi-engine service), the SDK then
// never sees them; every other request reaches the SDK with its body
// intact.
func TestRefuseWriteOffered(t *testing.T) {
	a, b := engine(t, corpus(5, 5), true, testFields), engine(t, corpus(6, 5), true, testFields)
	for _, c := range []struct {
		name     string
		engines  []mcpserver.Engine
		readOnly bool
		body     string
		refused  bool
	}{
		{"index_add by a reader", []mcpserver.Engine{{Name: "docs", Backend: a}}, true, toolCallBody("index_add"), true},
		{"index_delete by a reader", []mcpserver.Engine{{Name: "docs", Backend: a}}, true, toolCallBody("index_delete"), true},
		{"write in a batch", []mcpserver.Engine{{Name: "docs", Backend: a}}, true, "[" + toolCallBody("search") + "," + toolCallBody("index_add") + "]", true},
		{"suffixed write", []mcpserver.Engine{{Name: "a", Backend: a}, {Name: "b", Backend: b}}, true, toolCallBody("index_add_b"), true},
		{"search by a reader", []mcpserver.Engine{{Name: "docs", Backend: a}}, true, toolCallBody("search"), false},
		{"index_add by a writer", []mcpserver.Engine{{Name: "docs", Backend: a}}, false, toolCallBody("index_add"), false},
		{"not JSON", []mcpserver.Engine{{Name: "docs", Backend: a}}, true, "{", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := service(t, mcpserver.Options{Engines: c.engines})
			var offered atomic.Bool
			h := svc.Handler(mcpserver.HTTPOptions{
				Identify: func(*http.Request) *mcpserver.Identity {
					return &mcpserver.Identity{ID: "k", Caller: mcpserver.Caller{ReadOnly: c.readOnly}, Carry: func(ctx context.Context) context.Context { return ctx }}
				},
				RefuseWrite: func(w http.ResponseWriter, _ *http.Request) bool {
					offered.Store(true)
					w.WriteHeader(http.StatusForbidden)
					return true
				},
			})
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if offered.Load() != c.refused || (rec.Code == http.StatusForbidden) != c.refused {
				t.Fatalf("offered %v, HTTP %d %s; want refused %v", offered.Load(), rec.Code, rec.Body, c.refused)
			}
			if !c.refused && c.body == toolCallBody("search") && !strings.Contains(rec.Body.String(), `"result"`) {
				t.Fatalf("search did not reach the SDK intact: HTTP %d %s", rec.Code, rec.Body)
			}
		})
	}
}

func toolCallBody(name string) string {
	args := `{"query":"sun"}`
	if strings.HasPrefix(name, "index_") {
		args = `{"documents":[{"id":"x","text":"y"}]}`
	}
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

// TestServersDoNotGrowWithCallers: the handler keeps one MCP server per
// scope, not per caller. 300 callers (as many JWT subjects) with two
// scopes between them leave two servers, and each caller is still served
// under its own identity.
func TestServersDoNotGrowWithCallers(t *testing.T) {
	e := engine(t, corpus(7, 5), true, testFields)
	svc := service(t, mcpserver.Options{Engines: []mcpserver.Engine{{Name: "docs", Backend: e}}})
	type seenKey struct{}
	var carried atomic.Int64
	h := svc.Handler(mcpserver.HTTPOptions{Identify: func(r *http.Request) *mcpserver.Identity {
		sub := r.Header.Get("X-Sub")
		return &mcpserver.Identity{ID: sub, Caller: mcpserver.Caller{ReadOnly: strings.HasSuffix(sub, "r")},
			Carry: func(ctx context.Context) context.Context {
				carried.Add(1)
				return context.WithValue(ctx, seenKey{}, sub)
			}}
	}})
	for i := range 300 {
		sub := fmt.Sprintf("user-%d-%c", i, "rw"[i%2])
		body := toolCallBody("search")
		if i%3 == 0 {
			body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		}
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Sub", sub)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", sub, rec.Code, rec.Body)
		}
		if i%3 == 0 && strings.Contains(rec.Body.String(), "index_add") == strings.HasSuffix(sub, "r") {
			t.Fatalf("%s (read-only %v) was listed %s", sub, strings.HasSuffix(sub, "r"), rec.Body)
		}
	}
	if n := mcpserver.ServersBuilt(h); n != 2 {
		t.Fatalf("%d MCP servers kept for 300 callers in two scopes; want 2", n)
	}
	if carried.Load() != 200 {
		t.Fatalf("%d of 200 tool calls carried their caller's identity", carried.Load())
	}
}
