package anyreplica

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// roundRobin is a reverse proxy on loopback that sends each request to
// the next replica in turn, as a load balancer without affinity does, and
// counts what each replica received.
type roundRobin struct {
	url    string
	next   atomic.Uint64
	counts []atomic.Int64
}

func newRoundRobin(t *testing.T, replicas ...*replica) *roundRobin {
	t.Helper()
	rr := &roundRobin{counts: make([]atomic.Int64, len(replicas))}
	targets := make([]*url.URL, len(replicas))
	for i, r := range replicas {
		targets[i] = &url.URL{Scheme: "http", Host: r.addr}
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			i := int(rr.next.Add(1)-1) % len(targets)
			rr.counts[i].Add(1)
			pr.SetURL(targets[i])
			pr.Out.Host = pr.In.Host
			// The request body is read whole before it is sent on, as
			// nginx does by default (proxy_request_buffering). Streamed,
			// it races net/http: the server closes the inbound body as
			// soon as the proxy starts its answer, while the transport
			// may still be making its last read of it, and the transport
			// then drops the upstream connection in the middle of the
			// replica's answer (the client sees "unexpected EOF").
			if pr.In.Body != nil && pr.In.Body != http.NoBody {
				b, err := io.ReadAll(pr.In.Body)
				pr.Out.ContentLength = int64(len(b))
				pr.Out.Body = io.NopCloser(bytes.NewReader(b))
				if err != nil { // fails the request upstream, as it would have
					pr.Out.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{err}))
				}
			}
		},
		FlushInterval: -1, // SSE: every event as it comes
		// A transport of the proxy's own: the clients in this test keep
		// theirs, as a load balancer and its clients share nothing.
		Transport: http.DefaultTransport.(*http.Transport).Clone(),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	rr.url = "http://" + ln.Addr().String()
	return rr
}

// errReader fails every read with its error.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// bearer adds an Authorization header to every request.
type bearer struct {
	key string
	rt  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.rt.RoundTrip(r)
}

// mcpClient connects the Go SDK client to endpoint with key, speaking
// protocol version (""; the SDK's newest).
func mcpClient(t *testing.T, endpoint, key, version string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{key: key, rt: http.DefaultTransport.(*http.Transport).Clone()}, Timeout: 60 * time.Second}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "replicas", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (protocol %q): %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// oracle is the ids of acme's documents with topic, from the corpus.
func oracle(t *testing.T, corpus, topic string) []string {
	t.Helper()
	b, err := os.ReadFile(corpus)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var d doc
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		if d.Tenant == "acme" && d.Topic == topic {
			ids = append(ids, d.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestMCPOnEveryReplica: an MCP client behind a round-robin proxy over
// two replicas is served every call, whichever replica each reaches: the
// Go SDK client with the sessionless protocol and with the initialize
// handshake (whose follow-up calls reach the replica that did not answer
// initialize), search pages fetched through alternating replicas equal
// the oracle, and the reference Python client runs its checks through
// the same proxy.
func TestMCPOnEveryReplica(t *testing.T) {
	bin := itest.BuildSidecar(t, t.TempDir())
	dir := t.TempDir()
	corpus := writeCorpus(t, dir, 31, 80)
	cfg := writeFile(t, dir, "replicas.yaml", replicaConfig(corpus, true))
	env := keyEnv(randomHexKey(t))
	rr := newRoundRobin(t, start(t, bin, cfg, env...), start(t, bin, cfg, env...))
	want := oracle(t, corpus, "a")
	if len(want) < 6 {
		t.Fatalf("oracle has %d documents; the corpus needs more", len(want))
	}

	for _, version := range []string{"", "2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run("go sdk protocol "+version, func(t *testing.T) {
			cs := mcpClient(t, rr.url+"/mcp", acmeKey, version)
			for i := range 6 {
				tools, err := cs.ListTools(context.Background(), nil)
				if err != nil {
					t.Fatalf("tools/list #%d: %v", i, err)
				}
				if len(tools.Tools) != 1 || tools.Tools[0].Name != "search" {
					t.Fatalf("tools/list #%d: %v", i, tools.Tools)
				}
			}
			var got []string
			cursor := ""
			for page := 0; ; page++ {
				args := map[string]any{"query": "solar", "k": 4, "filter": map[string]any{"field": "topic", "op": "eq", "value": "a"}}
				if cursor != "" {
					args["cursor"] = cursor
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: args})
				if err != nil || res.IsError {
					t.Fatalf("search page %d: %v %+v", page, err, res)
				}
				var sc struct {
					Hits []struct {
						ID string `json:"id"`
					} `json:"hits"`
					NextCursor string `json:"nextCursor"`
				}
				b, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(b, &sc); err != nil {
					t.Fatal(err)
				}
				for _, h := range sc.Hits {
					got = append(got, h.ID)
				}
				if cursor = sc.NextCursor; cursor == "" || page > 50 {
					break
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("paged search through both replicas: %v, oracle %v", got, want)
			}
		})
	}
	for i := range rr.counts {
		if n := rr.counts[i].Load(); n < 10 {
			t.Fatalf("replica %d received %d requests; the proxy did not spread them", i, n)
		}
	}

	py := os.Getenv("RCP_MCP_PYTHON")
	if py == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal("RCP_MCP_PYTHON is not set: run integration/mcp/setup.sh and source integration/.work/mcp.env")
		}
		t.Log("RCP_MCP_PYTHON is not set: the Python client check is left out")
		return
	}
	plan, _ := json.Marshal(map[string]any{"http": rr.url + "/mcp", "key": acmeKey, "tools": []string{"search"}, "search": "search",
		"query": "solar", "filter": map[string]any{"field": "topic", "value": "a"}, "want_ids": want, "page_k": 3, "bad_field": "colour"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	before := rr.next.Load()
	out, err := exec.CommandContext(ctx, py, filepath.Join(itest.RepoRoot(t), "integration", "mcp", "check_client.py"), string(plan)).CombinedOutput()
	if err != nil {
		t.Fatalf("Python MCP client through two replicas: %v\n%s", err, out)
	}
	t.Logf("Python MCP client through two replicas (%d requests):\n%s", rr.next.Load()-before, out)
}

// mcpPost sends one JSON-RPC message to the replica's /mcp and returns
// the answer's status, headers and body.
func mcpPost(t *testing.T, r *replica, key, session, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+r.addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+key)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// goroutines reads go_goroutines from the replica's /metrics.
func goroutines(t *testing.T, r *replica, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+r.addr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatalf("no go_goroutines on /metrics (HTTP %d)", resp.StatusCode)
	return 0
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestMCPHoldsNoSessions: MCP over HTTP keeps nothing per client. 30
// initialize calls that never finish the handshake and 24 concurrent
// handshakes with one key are each answered without a session id, leave
// no goroutine behind, and a tool call needs no handshake at all. A file
// that still sets server.mcp.max_sessions or session_timeout is refused
// with the error that says why.
func TestMCPHoldsNoSessions(t *testing.T) {
	bin := itest.BuildSidecar(t, t.TempDir())
	dir := t.TempDir()
	corpus := writeCorpus(t, dir, 37, 40)
	cfg := writeFile(t, dir, "replica.yaml", replicaConfig(corpus, true))
	r := start(t, bin, cfg, keyEnv(randomHexKey(t))...)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"solar","k":2}}}`
	if code, _, body := mcpPost(t, r, acmeKey, "", call); code != http.StatusOK || !strings.Contains(body, `"hits"`) {
		t.Fatalf("tools/call without a handshake: HTTP %d %s", code, body)
	}
	base := goroutines(t, r, acmeKey)

	for i := range 30 {
		code, h, body := mcpPost(t, r, acmeKey, "", initialize)
		if code != http.StatusOK || h.Get("Mcp-Session-Id") != "" || !strings.Contains(body, `"serverInfo"`) {
			t.Fatalf("initialize #%d: HTTP %d session %q %s", i, code, h.Get("Mcp-Session-Id"), body)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 24)
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, h, _ := mcpPost(t, r, acmeKey, "", initialize)
			if code != http.StatusOK || h.Get("Mcp-Session-Id") != "" {
				errs <- fmt.Sprintf("handshake %d: initialize HTTP %d session %q", i, code, h.Get("Mcp-Session-Id"))
				return
			}
			if code, _, _ := mcpPost(t, r, acmeKey, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
				errs <- fmt.Sprintf("handshake %d: initialized HTTP %d", i, code)
				return
			}
			if code, _, body := mcpPost(t, r, acmeKey, "", call); code != http.StatusOK || !strings.Contains(body, `"hits"`) {
				errs <- fmt.Sprintf("handshake %d: tools/call HTTP %d %s", i, code, body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// A session id a client kept from elsewhere (another replica, a
	// restarted process) is no reason to refuse it.
	if code, _, body := mcpPost(t, r, acmeKey, "a-session-from-another-replica", call); code != http.StatusOK || !strings.Contains(body, `"hits"`) {
		t.Fatalf("tools/call with a foreign session id: HTTP %d %s", code, body)
	}
	// Connections the client keeps idle hold a goroutine each; nothing
	// else may remain of 54 handshakes.
	http.DefaultClient.CloseIdleConnections()
	var now int
	for range 50 {
		if now = goroutines(t, r, acmeKey); now <= base+2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if now > base+2 {
		t.Fatalf("%d goroutines after 54 handshakes, %d before: the server keeps something per client", now, base)
	}

	for _, key := range []string{"max_sessions: 8", "session_timeout: 10m"} {
		old := writeFile(t, dir, "old.yaml", replicaConfig(corpus, false)+"server:\n  mcp:\n    "+key+"\n")
		out, err := exec.Command(bin, "config", "check", "--config", old).CombinedOutput()
		name, _, _ := strings.Cut(key, ":")
		want := "server.mcp." + name + ": removed: MCP over Streamable HTTP keeps no sessions"
		if err == nil || !strings.Contains(string(out), want) {
			t.Fatalf("config check of a file with server.mcp.%s: %v\n%s\nwant %q", name, err, out, want)
		}
	}
}
