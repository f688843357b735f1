package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// apiKey is the static key configured beside the tokens (read only).
const apiKey = "integration-oauth-key-0123456789abcdef"

// corpus is what the memory engine serves; the oracle for a query is the
// documents whose text holds it.
var corpus = map[string]string{
	"d0": "solar panels turn light into power",
	"d1": "comets grow tails near the sun",
	"d2": "tides follow the moon",
}

// authServer is the running authorization server, from oauth.env.
type authServer struct {
	issuer, tokenEndpoint, jwksURI string
	writerID, writerSecret         string // may ask for rcp.read and rcp.write
	readerID, readerSecret         string // may ask for rcp.read only
}

func newAuthServer(t *testing.T) *authServer {
	t.Helper()
	how := "run integration/oauth/start.sh and source integration/.work/oauth.env"
	as := &authServer{
		issuer:   itest.RequireEnv(t, "RCP_OAUTH_ISSUER", how),
		writerID: itest.RequireEnv(t, "RCP_OAUTH_CLIENT_ID", how), writerSecret: itest.RequireEnv(t, "RCP_OAUTH_CLIENT_SECRET", how),
		readerID: itest.RequireEnv(t, "RCP_OAUTH_READER_ID", how), readerSecret: itest.RequireEnv(t, "RCP_OAUTH_READER_SECRET", how),
	}
	var meta struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
		JWKSURI       string `json:"jwks_uri"`
	}
	getJSON(t, as.issuer+"/.well-known/openid-configuration", &meta)
	if meta.Issuer != as.issuer || meta.TokenEndpoint == "" || meta.JWKSURI == "" {
		t.Fatalf("authorization server metadata: %+v", meta)
	}
	as.tokenEndpoint, as.jwksURI = meta.TokenEndpoint, meta.JWKSURI
	return as
}

// token gets an access token by client credentials for resource with
// scope (RFC 6749 §4.4, RFC 8707).
func (as *authServer) token(t *testing.T, id, secret, scope, resource string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}}
	if scope != "" {
		form.Set("scope", scope)
	}
	req, _ := http.NewRequest(http.MethodPost, as.tokenEndpoint, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &tr) != nil || tr.AccessToken == "" {
		t.Fatalf("token for %s scope %q resource %s: HTTP %d %s", id, scope, resource, resp.StatusCode, b)
	}
	if tr.Scope != scope {
		t.Fatalf("token for %s: scope %q, asked for %q", id, tr.Scope, scope)
	}
	return tr.AccessToken
}

var client = &http.Client{Timeout: 60 * time.Second}

func getJSON(t *testing.T, u string, into any) {
	t.Helper()
	resp, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, into) != nil {
		t.Fatalf("GET %s: HTTP %d %s", u, resp.StatusCode, b)
	}
}

// sidecar is a running `rcp-sidecar serve` whose MCP endpoint is the
// protected resource.
type sidecar struct {
	*itest.Serve
	base, resource, metadataURL string
}

var (
	buildOnce sync.Once
	binPath   string
	binDir    string
)

// sidecarBinary builds the sidecar once for the package's tests.
func sidecarBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		var err error
		if binDir, err = os.MkdirTemp("", "rcp-oauth-test"); err != nil {
			t.Fatal(err)
		}
		binPath = itest.BuildSidecar(t, binDir)
	})
	if binPath == "" {
		t.Fatal("the sidecar did not build")
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// freePort is a port nothing listens on now; the resource URL must name
// the sidecar's port before it starts.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// startSidecar serves the corpus from the memory engine with the API key
// and tokens from as for its MCP endpoint.
func startSidecar(t *testing.T, as *authServer) *sidecar { return startServe(t, as, false) }

// startServe is startSidecar; federated serves the corpus from two
// backends, a and b, federated (tools search, search_a, index_add_a…).
func startServe(t *testing.T, as *authServer, federated bool) *sidecar {
	t.Helper()
	dir := t.TempDir()
	var c strings.Builder
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range corpus {
			if !yield(id) {
				return
			}
		}
	}) {
		fmt.Fprintf(&c, "{\"_id\":%q,\"title\":%q,\"text\":%q}\n", id, id, corpus[id])
	}
	corpusPath := filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(corpusPath, []byte(c.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	s := &sidecar{base: "http://127.0.0.1:" + port}
	s.resource = s.base + "/mcp"
	s.metadataURL = s.base + "/.well-known/oauth-protected-resource/mcp"
	backends := fmt.Sprintf("  - {name: docs, engine: memory, settings: {corpus: %q, writable: true}, policy: {writable: true}}\n", corpusPath)
	if federated {
		backends = strings.ReplaceAll(backends, "name: docs", "name: a") + strings.ReplaceAll(backends, "name: docs", "name: b")
	}
	cfg := fmt.Sprintf(`backends:
%saccess:
  keys:
    - {id: batch, env: RCP_OAUTH_TEST_KEY}
  jwt:
    issuer: %q
    resource: %q
    jwks_url: %q
    scopes: {read: rcp.read, write: rcp.write}
`, backends, as.issuer, s.resource, as.jwksURI)
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Serve = itest.StartServeOn(t, sidecarBinary(t), "127.0.0.1:"+port, cfgPath, 60*time.Second, "RCP_OAUTH_TEST_KEY="+apiKey)
	s.AwaitReady(client, 60*time.Second)
	return s
}

// post sends one JSON-RPC message to the MCP endpoint with bearer (none
// when "") and returns the status and WWW-Authenticate.
func (s *sidecar) post(t *testing.T, bearer, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.resource, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// toolCall is a tools/call JSON-RPC request.
func toolCall(name string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	return string(b)
}

// oracle is the ids of the corpus documents whose text holds query.
func oracle(query string) []string {
	var ids []string
	for id, text := range corpus {
		if strings.Contains(text, query) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// exchange is one HTTP exchange the TypeScript client printed.
type exchange struct {
	Method        string            `json:"method"`
	URL           string            `json:"url"`
	Authorization bool              `json:"authorization"`
	Status        int               `json:"status"`
	Challenge     string            `json:"challenge"`
	Form          map[string]string `json:"form"`
}

// transcript is what oauth_client.cjs printed.
type transcript struct {
	http     []exchange
	search   json.RawMessage
	add      json.RawMessage
	addError string
	raw      string
}

// runTSClient runs the TypeScript SDK client with the client id and
// secret, asking for scope: connect, search query, index_add doc.
func runTSClient(t *testing.T, s *sidecar, as *authServer, id, secret, scope, query string, doc map[string]string) transcript {
	t.Helper()
	how := "run integration/mcp/setup.sh and source integration/.work/mcp.env"
	node := itest.RequireEnv(t, "RCP_MCP_NODE", how)
	modules := itest.RequireEnv(t, "RCP_MCP_NODE_MODULES", how)
	plan, _ := json.Marshal(map[string]any{"url": s.resource, "clientId": id, "clientSecret": secret, "issuer": as.issuer,
		"scope": scope, "query": query, "add": doc})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(itest.RepoRoot(t), "integration", "oauth", "oauth_client.cjs"), string(plan))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("oauth_client.cjs: %v\n--- stdout\n%s\n--- stderr\n%s", err, out.String(), errb.String())
	}
	tr := transcript{raw: out.String()}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var l struct {
			HTTP     *exchange       `json:"http"`
			Search   json.RawMessage `json:"search"`
			Add      json.RawMessage `json:"add"`
			AddError string          `json:"addError"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("oauth_client.cjs printed %q: %v", line, err)
		}
		switch {
		case l.HTTP != nil:
			tr.http = append(tr.http, *l.HTTP)
		case l.Search != nil:
			tr.search = l.Search
		case l.Add != nil:
			tr.add = l.Add
		case l.AddError != "":
			tr.addError = l.AddError
		}
	}
	return tr
}

// find returns the index of the first exchange at or after from that
// matches, failing the test with the transcript when there is none.
func (tr transcript) find(t *testing.T, from int, what string, match func(exchange) bool) int {
	t.Helper()
	for i := from; i < len(tr.http); i++ {
		if match(tr.http[i]) {
			return i
		}
	}
	t.Fatalf("the client made no %s (from exchange %d):\n%s", what, from, tr.raw)
	return -1
}

// hitIDs reads the ids of a search tool result's structured content.
func hitIDs(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Hits []struct {
				ID any `json:"id"`
			} `json:"hits"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.IsError {
		t.Fatalf("search result %s (%v)", raw, err)
	}
	ids := make([]string, 0, len(res.StructuredContent.Hits))
	for _, h := range res.StructuredContent.Hits {
		ids = append(ids, fmt.Sprint(h.ID))
	}
	slices.Sort(ids)
	return ids
}

// TestTypeScriptClientDiscoversAndSearches: the TypeScript SDK, given only
// the MCP URL and its client credentials, starts from a 401 with no
// token, follows resource_metadata to the metadata and the authorization
// server, gets a token for this resource, finds what the oracle finds and
// writes with the write scope.
func TestTypeScriptClientDiscoversAndSearches(t *testing.T) {
	as := newAuthServer(t)
	s := startSidecar(t, as)
	const query = "comets"
	doc := map[string]string{"id": "ts-added", "text": "a note the TypeScript client wrote"}
	tr := runTSClient(t, s, as, as.writerID, as.writerSecret, "rcp.read rcp.write", query, doc)

	first := tr.http[0]
	wantChallenge := fmt.Sprintf(`Bearer resource_metadata=%q, scope="rcp.read"`, s.metadataURL)
	if first.URL != s.resource || first.Authorization || first.Status != http.StatusUnauthorized || first.Challenge != wantChallenge {
		t.Fatalf("first exchange %+v, want a 401 to a request without a token carrying %s", first, wantChallenge)
	}
	i := tr.find(t, 1, "GET of the resource metadata", func(e exchange) bool {
		return e.Method == http.MethodGet && e.URL == s.metadataURL && e.Status == http.StatusOK
	})
	i = tr.find(t, i+1, "GET of the authorization server metadata", func(e exchange) bool {
		return e.Method == http.MethodGet && strings.HasPrefix(e.URL, as.issuer+"/.well-known/") && e.Status == http.StatusOK
	})
	i = tr.find(t, i+1, "token request for the resource", func(e exchange) bool {
		return e.Method == http.MethodPost && e.URL == as.tokenEndpoint && e.Status == http.StatusOK &&
			e.Form["grant_type"] == "client_credentials" && e.Form["resource"] == s.resource
	})
	tr.find(t, i+1, "MCP request with the token", func(e exchange) bool {
		return e.URL == s.resource && e.Authorization && e.Status == http.StatusOK
	})
	for _, e := range tr.http[i+1:] {
		if e.URL == s.resource && e.Status != http.StatusOK && e.Status != http.StatusAccepted && e.Status != http.StatusMethodNotAllowed {
			t.Fatalf("after the token: %+v\n%s", e, tr.raw)
		}
	}
	if got, want := hitIDs(t, tr.search), oracle(query); !slices.Equal(got, want) {
		t.Fatalf("search %q: hits %v, oracle %v", query, got, want)
	}
	if tr.add == nil || !bytes.Contains(tr.add, []byte(`"ts-added"`)) || bytes.Contains(tr.add, []byte(`"isError":true`)) {
		t.Fatalf("index_add with the write scope: %s (error %q)", tr.add, tr.addError)
	}
	if ids := keySearch(t, s, "TypeScript"); !slices.Equal(ids, []string{"ts-added"}) {
		t.Fatalf("search for the written document found %v", ids)
	}
}

// TestTypeScriptReaderIsRefusedWrites: a client with only rcp.read
// searches, but its index_add is refused with 403 insufficient_scope
// naming the read and write scopes, and nothing is written.
func TestTypeScriptReaderIsRefusedWrites(t *testing.T) {
	as := newAuthServer(t)
	s := startSidecar(t, as)
	doc := map[string]string{"id": "reader-added", "text": "zebras were never written"}
	tr := runTSClient(t, s, as, as.readerID, as.readerSecret, "rcp.read", "moon", doc)
	if got, want := hitIDs(t, tr.search), oracle("moon"); !slices.Equal(got, want) {
		t.Fatalf("search moon: hits %v, oracle %v", got, want)
	}
	want := fmt.Sprintf(`Bearer resource_metadata=%q, scope="rcp.read rcp.write", error="insufficient_scope"`, s.metadataURL)
	tr.find(t, 0, "403 insufficient_scope on index_add", func(e exchange) bool {
		return e.URL == s.resource && e.Authorization && e.Status == http.StatusForbidden && e.Challenge == want
	})
	if tr.add != nil || !strings.Contains(tr.addError, "403") {
		t.Fatalf("index_add by a reader: result %s, error %q; want a 403 error", tr.add, tr.addError)
	}
	if ids := keySearch(t, s, "zebras"); len(ids) != 0 {
		t.Fatalf("the refused index_add wrote: search zebras found %v", ids)
	}
}

// TestRefusals: each token the resource must not accept, over plain HTTP
// with tokens from the real authorization server.
func TestRefusals(t *testing.T) {
	as := newAuthServer(t)
	s := startSidecar(t, as)
	search := toolCall("search", map[string]any{"query": "comets"})
	add := toolCall("index_add", map[string]any{"documents": []map[string]string{{"id": "x", "text": "y"}}})
	md := fmt.Sprintf("resource_metadata=%q", s.metadataURL)
	cases := []struct {
		name, token, body string
		status            int
		challenge         string
	}{
		{"no token", "", search, 401, "Bearer " + md + `, scope="rcp.read"`},
		{"token for another audience", as.token(t, as.writerID, as.writerSecret, "rcp.read", "http://127.0.0.1:1/mcp"), search, 401,
			"Bearer " + md + `, scope="rcp.read", error="invalid_token"`},
		{"token without the read scope", as.token(t, as.writerID, as.writerSecret, "rcp.write", s.resource), search, 403,
			"Bearer " + md + `, scope="rcp.read", error="insufficient_scope"`},
		{"index_add without the write scope", as.token(t, as.readerID, as.readerSecret, "rcp.read", s.resource), add, 403,
			"Bearer " + md + `, scope="rcp.read rcp.write", error="insufficient_scope"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, challenge := s.post(t, c.token, c.body)
			if status != c.status || challenge != c.challenge {
				t.Fatalf("HTTP %d WWW-Authenticate %q, want %d %q", status, challenge, c.status, c.challenge)
			}
		})
	}
	t.Run("metadata", func(t *testing.T) {
		for _, u := range []string{s.metadataURL, s.base + "/.well-known/oauth-protected-resource"} {
			var got map[string]any
			getJSON(t, u, &got)
			b, _ := json.Marshal(got)
			want := fmt.Sprintf(`{"authorization_servers":[%q],"bearer_methods_supported":["header"],"resource":%q,"scopes_supported":["rcp.read","rcp.write"]}`,
				as.issuer, s.resource)
			if string(b) != want {
				t.Fatalf("GET %s: %s, want %s", u, b, want)
			}
		}
	})
	t.Run("api key", func(t *testing.T) {
		if got, want := keySearch(t, s, "comets"), oracle("comets"); !slices.Equal(got, want) {
			t.Fatalf("search with the API key: %v, oracle %v", got, want)
		}
	})
}

// TestFederatedRefusals: a federating sidecar is the same resource
// server: the challenge, the metadata, and a write to one engine without
// the write scope refused with the step-up challenge; a reader searches.
func TestFederatedRefusals(t *testing.T) {
	as := newAuthServer(t)
	s := startServe(t, as, true)
	md := fmt.Sprintf("resource_metadata=%q", s.metadataURL)
	reader := as.token(t, as.readerID, as.readerSecret, "rcp.read", s.resource)
	if st, ch := s.post(t, "", toolCall("search", map[string]any{"query": "moon"})); st != 401 || ch != "Bearer "+md+`, scope="rcp.read"` {
		t.Fatalf("no token: HTTP %d %q", st, ch)
	}
	add := toolCall("index_add_b", map[string]any{"documents": []map[string]string{{"id": "x", "text": "y"}}})
	if st, ch := s.post(t, reader, add); st != 403 || ch != "Bearer "+md+`, scope="rcp.read rcp.write", error="insufficient_scope"` {
		t.Fatalf("index_add_b by a reader: HTTP %d %q", st, ch)
	}
	if st, _ := s.post(t, reader, toolCall("search_a", map[string]any{"query": "moon"})); st != 200 {
		t.Fatalf("search_a by a reader: HTTP %d", st)
	}
	var got map[string]any
	getJSON(t, s.metadataURL, &got)
	if got["resource"] != s.resource {
		t.Fatalf("metadata %v", got)
	}
}

// keyTransport adds the static API key to every request.
type keyTransport struct{}

func (keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-API-Key", apiKey)
	return http.DefaultTransport.RoundTrip(r)
}

// keySearch searches with the Go SDK's client and the static API key.
func keySearch(t *testing.T, s *sidecar, query string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-key-check", Version: "0"}, nil)
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.resource, HTTPClient: &http.Client{Transport: keyTransport{}}}, nil)
	if err != nil {
		t.Fatalf("connect with the API key: %v", err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": query}})
	if err != nil {
		t.Fatalf("search with the API key: %v", err)
	}
	raw, _ := json.Marshal(res)
	return hitIDs(t, raw)
}
