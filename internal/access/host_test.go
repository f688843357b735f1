package access_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
)

// hostCase is one request as a browser page or a client could send it,
// arriving at local address at.
type hostCase struct {
	at, host, origin string
	want             int
}

// serveHost runs r through g.HostCheck and returns the status.
func serveHost(g *access.Guard, c hostCase) int {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	r := httptest.NewRequest(http.MethodPost, "/rcp/retrieve", strings.NewReader("{}"))
	r.Host = c.host
	if c.origin != "" {
		r.Header.Set("Origin", c.origin)
	}
	if c.at != "" {
		la, err := net.ResolveTCPAddr("tcp", c.at)
		if err != nil {
			panic(err)
		}
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, la))
	}
	w := httptest.NewRecorder()
	g.HostCheck(ok).ServeHTTP(w, r)
	return w.Code
}

// TestHostCheckKeyless: without keys, a request at a loopback address
// must name a loopback host or an allowed one, however the attacker
// spells it; one at another address (a deliberately exposed listener) is
// not judged by its Host. Origin must be the request's own or listed.
func TestHostCheckKeyless(t *testing.T) {
	g, err := access.New(access.Options{AllowedHosts: []string{"Search.Example.Test."}, AllowedOrigins: []string{"https://app.example.test"}})
	if err != nil {
		t.Fatal(err)
	}
	const lo, lo6, lan = "127.0.0.1:8080", "[::1]:8080", "10.1.2.3:8080"
	for _, c := range []hostCase{
		{lo, "127.0.0.1:8080", "", 200},
		{lo, "localhost:8080", "http://localhost:8080", 200},
		{lo, "LocalHost.:8080", "", 200},
		{lo, "localhost", "", 200},
		{lo6, "[::1]:8080", "", 200},
		{lo, "[::ffff:127.0.0.1]:8080", "", 200},
		{lo, "search.example.test:8080", "", 200},
		{lo, "SEARCH.example.test.:9999", "", 200},
		{lo, "127.0.0.1:8080", "https://app.example.test", 200},
		{lo, "evil.example:8080", "http://evil.example:8080", 403},
		{lo, "evil.example:8080", "", 403},
		{lo6, "evil.example:8080", "", 403},
		{"[::ffff:127.0.0.1]:8080", "evil.example:8080", "", 403},
		{"127.0.0.2:8080", "evil.example:8080", "", 403},
		{lo, "localhost.evil.example:8080", "", 403},
		{lo, "127.0.0.1.nip.io:8080", "", 403},
		{lo, "search.example.test.evil:8080", "", 403},
		{lo, "", "", 403},
		{"", "evil.example:8080", "", 403}, // local address unknown: judged as loopback
		{lo, "127.0.0.1:8080", "http://evil.example:8080", 403},
		{lo, "127.0.0.1:8080", "null", 403},
		{lo, "127.0.0.1:8080", "http://127.0.0.1:8080/path", 403},
		{lo, "127.0.0.1:8080", "file://", 403},
		{lan, "search-sidecar.ns.svc:8080", "", 200},
		{lan, "search-sidecar.ns.svc:8080", "http://evil.example", 403},
	} {
		if got := serveHost(g, c); got != c.want {
			t.Errorf("at %s, Host %q, Origin %q: HTTP %d, want %d", c.at, c.host, c.origin, got, c.want)
		}
	}
}

// TestHostCheckFollowsReload: the Host rule is decided per request from
// the live policy: keys lift it (the key is the check), a reload without
// keys restores it, and a reload changes the allowed hosts.
func TestHostCheckFollowsReload(t *testing.T) {
	g, err := access.New(access.Options{})
	if err != nil {
		t.Fatal(err)
	}
	evil := hostCase{"127.0.0.1:8080", "evil.example:8080", "", 403}
	proxied := hostCase{"127.0.0.1:8080", "search.example.test:8080", "", 403}
	check := func(phase string, cs ...hostCase) {
		t.Helper()
		for _, c := range cs {
			if got := serveHost(g, c); got != c.want {
				t.Errorf("%s: Host %q: HTTP %d, want %d", phase, c.host, got, c.want)
			}
		}
	}
	check("no keys", evil, proxied)
	if err := g.Reload(access.Options{Keys: testKeys()}); err != nil {
		t.Fatal(err)
	}
	evil.want, proxied.want = 200, 200
	check("keys", evil, proxied)
	crossOrigin := hostCase{"127.0.0.1:8080", "search.example.test:8080", "https://evil.example", 403}
	check("keys, cross-origin page", crossOrigin)
	if err := g.Reload(access.Options{AllowedHosts: []string{"search.example.test"}}); err != nil {
		t.Fatal(err)
	}
	evil.want = 403
	check("no keys again, one allowed host", evil, proxied)
}

// TestLimitBody: a handler behind LimitBody sees a whole body within
// MaxBodyBytes, never a larger one, which is answered 413 with -32013,
// whether or not its length was declared.
func TestLimitBody(t *testing.T) {
	g, err := access.New(access.Options{MaxBodyBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	h := g.LimitBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen = len(b)
	}))
	for _, c := range []struct {
		n        int
		declared bool
		want     int
	}{{100, true, 200}, {100, false, 200}, {101, true, 413}, {101, false, 413}, {5000, false, 413}, {0, true, 200}} {
		seen = -1
		var body io.Reader = strings.NewReader(strings.Repeat("a", c.n))
		if !c.declared {
			body = io.MultiReader(body) // length unknown: chunked
		}
		r := httptest.NewRequest(http.MethodPost, "/mcp", body)
		if !c.declared {
			r.ContentLength = -1
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want || c.want == 200 && seen != c.n || c.want == 413 && (seen != -1 || !strings.Contains(w.Body.String(), "-32013")) {
			t.Errorf("%d bytes (declared %v): HTTP %d, handler saw %d, body %s", c.n, c.declared, w.Code, seen, w.Body)
		}
	}
}
