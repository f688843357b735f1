package access_test

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

const (
	testResource    = "https://search.example.com/mcp"
	testMetadataURL = "https://search.example.com/.well-known/oauth-protected-resource/mcp"
)

// resourceOptions: tokens from js for testResource (the audience defaults
// to it) beside the static test keys.
func resourceOptions(js *jwksServer) access.Options {
	j := jwtOptions(js)
	j.Audience, j.Resource = nil, testResource
	j.Claims.Tenant, j.TenantField = "", ""
	return access.Options{Keys: testKeys(), JWT: j}
}

// resourceClaims are valid claims of a reader token issued for testResource.
func resourceClaims() map[string]any {
	return with(claimsFor("svc", ""), "aud", testResource)
}

// TestResourceServerChallenges: with a resource, every refusal carries
// the challenge of the MCP authorization specification, and tokens are
// bound to the resource's audience (RFC 8707); keys work beside them.
func TestResourceServerChallenges(t *testing.T) {
	k := newRSAKey(t, "rsa-1")
	ts := newServer(t, resourceOptions(newJWKSServer(t, k)))
	search := map[string]any{"query": "rocket"}
	cases := []struct {
		name      string
		secret    string
		status    int
		challenge string
	}{
		{"no credentials", "", 401, `Bearer resource_metadata="` + testMetadataURL + `", scope="rcp.read"`},
		{"token for another audience", k.sign(t, with(resourceClaims(), "aud", testAudience)), 401,
			`Bearer resource_metadata="` + testMetadataURL + `", scope="rcp.read", error="invalid_token"`},
		{"token for another path", k.sign(t, with(resourceClaims(), "aud", testResource+"/x")), 401,
			`Bearer resource_metadata="` + testMetadataURL + `", scope="rcp.read", error="invalid_token"`},
		{"token for another host", k.sign(t, with(resourceClaims(), "aud", "https://search.example.org/mcp")), 401,
			`Bearer resource_metadata="` + testMetadataURL + `", scope="rcp.read", error="invalid_token"`},
		{"expired token", k.sign(t, with(resourceClaims(), "exp", 1000, "iat", 900, "nbf", 900)), 401,
			`Bearer resource_metadata="` + testMetadataURL + `", scope="rcp.read", error="invalid_token"`},
		{"unknown key", "not-a-key", 401, `Bearer resource_metadata="` + testMetadataURL + `", scope="rcp.read", error="invalid_token"`},
		{"token without the read scope", k.sign(t, with(resourceClaims(), "scope", "rcp.write")), 403,
			`Bearer resource_metadata="` + testMetadataURL + `", scope="rcp.read", error="insufficient_scope"`},
		{"token for the resource", k.sign(t, resourceClaims()), 200, ""},
		{"token for the resource with a final slash", k.sign(t, with(resourceClaims(), "aud", testResource+"/")), 200, ""},
		{"token with the resource among its audiences", k.sign(t, with(resourceClaims(), "aud", []string{"other", testResource})), 200, ""},
		{"static key", readerKey, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, ts, c.secret, "retrieve", search)
			if r.status != c.status || r.header.Get("WWW-Authenticate") != c.challenge {
				t.Fatalf("HTTP %d WWW-Authenticate %q, want %d %q", r.status, r.header.Get("WWW-Authenticate"), c.status, c.challenge)
			}
			if c.status != 200 {
				r.wantError(t, c.status, rcp.CodeUnauthorized)
			}
		})
	}
}

// TestChallengeWithoutResource: without a resource the 401 keeps its
// realm and carries no metadata URL, and no metadata is served.
func TestChallengeWithoutResource(t *testing.T) {
	k := newRSAKey(t, "rsa-1")
	ts := newServer(t, access.Options{Keys: testKeys(), JWT: jwtOptions(newJWKSServer(t, k))})
	r := call(t, ts, "", "retrieve", map[string]any{"query": "rocket"})
	if r.status != 401 || r.header.Get("WWW-Authenticate") != `Bearer realm="rcp"` {
		t.Fatalf("HTTP %d WWW-Authenticate %q", r.status, r.header.Get("WWW-Authenticate"))
	}
	resp, err := http.Get(ts.URL + access.MetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("metadata without a resource: HTTP %d, want the 401 of any path", resp.StatusCode)
	}
}

// TestProtectedResourceMetadata: the document (RFC 9728) is public at the
// well-known path and its path-suffixed form, holds exactly the RFC fields
// a client needs, and passes the Host and Origin check like every route.
func TestProtectedResourceMetadata(t *testing.T) {
	k := newRSAKey(t, "rsa-1")
	o := resourceOptions(newJWKSServer(t, k))
	g, err := access.New(o)
	if err != nil {
		t.Fatal(err)
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Errorf("next reached for %s", r.URL.Path) })
	ts := httptest.NewServer(g.HostCheck(g.Middleware(next)))
	t.Cleanup(ts.Close)
	want := map[string]any{"resource": testResource, "authorization_servers": []any{testIssuer},
		"scopes_supported": []any{"rcp.read", "rcp.write", "rcp.admin"}, "bearer_methods_supported": []any{"header"}}
	for _, path := range []string{access.MetadataPath, access.MetadataPath + "/mcp"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got map[string]any
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
			t.Fatalf("%s: HTTP %d %s", path, resp.StatusCode, body)
		}
		if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
			t.Fatalf("%s: fields %v, want exactly %v", path, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Fatalf("%s: %s, want %s", path, gb, wb)
		}
	}
	for _, c := range []struct {
		name, path, origin string
		status             int
	}{
		{"foreign origin", access.MetadataPath, "https://evil.example", http.StatusForbidden},
		{"other suffix", access.MetadataPath + "/rcp", "", http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+c.path, nil)
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: HTTP %d, want %d", c.name, resp.StatusCode, c.status)
		}
	}
}

// TestResourceConfig: a resource that is not an absolute https URL (http
// on loopback), or that the audience leaves out, is refused.
func TestResourceConfig(t *testing.T) {
	js := newJWKSServer(t, newRSAKey(t, "rsa-1"))
	for _, c := range []struct {
		resource string
		audience []string
		want     string
	}{
		{"http://search.example.com/mcp", nil, "https"},
		{"/mcp", nil, "absolute"},
		{"https://search.example.com/mcp#x", nil, "fragment"},
		{"https://search.example.com/mcp?tenant=a", nil, "query"},
		{"https://user:pw@search.example.com/mcp", nil, "credentials"},
		{testResource, []string{"rcp-sidecar"}, "audience must contain the resource"},
	} {
		o := resourceOptions(js)
		o.JWT.Resource, o.JWT.Audience = c.resource, c.audience
		_, err := access.New(o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("resource %q audience %v: error %v, want one saying %q", c.resource, c.audience, err, c.want)
		}
	}
	o := resourceOptions(js)
	o.JWT.Resource = "http://127.0.0.1:8080/mcp"
	if _, err := access.New(o); err != nil {
		t.Errorf("http on loopback: %v", err)
	}
}

// TestRefuseWrite: a token's caller without the write scope is answered
// 403 insufficient_scope naming the read and write scopes; a writer and
// a static key are left to the handler.
func TestRefuseWrite(t *testing.T) {
	k := newRSAKey(t, "rsa-1")
	g, err := access.New(resourceOptions(newJWKSServer(t, k)))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.RefuseWrite(w, r) {
			w.WriteHeader(http.StatusNoContent)
		}
	})))
	t.Cleanup(ts.Close)
	for _, c := range []struct {
		name, secret string
		status       int
		challenge    string
	}{
		{"reader token", k.sign(t, resourceClaims()), 403,
			`Bearer resource_metadata="` + testMetadataURL + `", scope="rcp.read rcp.write", error="insufficient_scope"`},
		{"writer token", k.sign(t, with(resourceClaims(), "scope", "rcp.read rcp.write")), 204, ""},
		{"read-only key", readerKey, 204, ""},
	} {
		r := post(t, ts, "/mcp", c.secret, []byte(`{}`))
		if r.status != c.status || r.header.Get("WWW-Authenticate") != c.challenge {
			t.Errorf("%s: HTTP %d WWW-Authenticate %q, want %d %q", c.name, r.status, r.header.Get("WWW-Authenticate"), c.status, c.challenge)
		}
	}
}

// TestResourceReload: a reload that sets the resource serves the
// metadata and the challenge at once; one that removes it takes both
// away.
func TestResourceReload(t *testing.T) {
	js := newJWKSServer(t, newRSAKey(t, "rsa-1"))
	plain := access.Options{Keys: testKeys(), JWT: jwtOptions(js)}
	g, err := access.New(plain)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.HostCheck(g.Middleware(http.NotFoundHandler())))
	t.Cleanup(ts.Close)
	get := func() (int, string) {
		resp, err := http.Get(ts.URL + access.MetadataPath + "/mcp")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
	}
	if st, ch := get(); st != 401 || ch != `Bearer realm="rcp"` {
		t.Fatalf("before: HTTP %d %q", st, ch)
	}
	if err := g.Reload(resourceOptions(js)); err != nil {
		t.Fatal(err)
	}
	if st, _ := get(); st != 200 {
		t.Fatalf("after a reload that sets the resource: HTTP %d", st)
	}
	if err := g.Reload(plain); err != nil {
		t.Fatal(err)
	}
	if st, ch := get(); st != 401 || ch != `Bearer realm="rcp"` {
		t.Fatalf("after a reload that removes it: HTTP %d %q", st, ch)
	}
}
