package fetch

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "localhost.": true, "127.0.0.1": true, "::1": true, "[::1]": true,
		"::ffff:127.0.0.1": true, "127.0.0.2": false, "localhost.evil.example": false, "127.0.0.1.nip.io": false,
		"evil.example": false, "": false, "0.0.0.0": false, "::": false, "fe80::1%lo": false, "127.1": false,
	} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		rule Rule
		url  string
		err  string // substring; "" for none
	}{
		{Rule{TLS: true}, "https://idp.example/jwks", ""},
		{Rule{TLS: true}, "http://127.0.0.1:8080/jwks", ""},
		{Rule{TLS: true}, "http://[::1]:8080/jwks", ""},
		{Rule{TLS: true}, "http://localhost/jwks", ""},
		{Rule{TLS: true}, "http://127.0.0.2/jwks", "must be https"},
		{Rule{TLS: true}, "http://idp.example/jwks", "must be https"},
		{Rule{TLS: true}, "https://user:pw@idp.example/jwks", "credentials"},
		{Rule{}, "http://embed:8000", ""},
		{Rule{}, "ftp://embed/", "absolute http(s)"},
		{Rule{}, "/relative", "absolute http(s)"},
		{Rule{}, "file:///etc/passwd", "absolute http(s)"},
	}
	for _, tt := range tests {
		err := tt.rule.CheckString(tt.url)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%+v.Check(%q) = %v, want %q", tt.rule, tt.url, err, tt.err)
		}
	}
}

// TestRedirects follows chains through real servers: the rule is applied
// to each target, https never falls back to cleartext off loopback, and
// at most MaxRedirects are followed.
func TestRedirects(t *testing.T) {
	final := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("keys")) }))
	defer final.Close()
	// hops serves /<n>, redirecting to /<n-1> and from /0 to to; it
	// returns the URL n redirects away from to.
	hops := func(n int, to string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			left, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
			if left == 0 {
				http.Redirect(w, r, to, http.StatusFound)
				return
			}
			http.Redirect(w, r, "/"+strconv.Itoa(left-1), http.StatusFound)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/" + strconv.Itoa(n-1)
	}
	farURL := strings.Replace(final.URL, "127.0.0.1", "127.0.0.2", 1) // non-loopback to the rule
	tests := []struct {
		name string
		rule Rule
		url  string
		ok   bool
	}{
		{"one redirect to loopback", Rule{TLS: true}, hops(1, final.URL), true},
		{"three redirects", Rule{TLS: true}, hops(3, final.URL), true},
		{"four redirects", Rule{TLS: true}, hops(4, final.URL), false},
		{"to plain http off loopback", Rule{TLS: true}, hops(1, farURL), false},
		{"to another scheme", Rule{}, hops(1, "ftp://127.0.0.1/x"), false},
		{"to credentials", Rule{}, hops(1, strings.Replace(final.URL, "http://", "http://u:p@", 1)), false},
	}
	for _, tt := range tests {
		resp, err := tt.rule.Client(nil).Get(tt.url)
		if err == nil {
			resp.Body.Close()
		}
		if (err == nil) != tt.ok {
			t.Errorf("%s: Get(%s) err = %v, want ok=%v", tt.name, tt.url, err, tt.ok)
		}
	}
	// An https start never ends on cleartext off loopback (checked on the
	// redirect itself, without dialling).
	req, _ := http.NewRequest(http.MethodGet, "http://embed.internal/v1", nil)
	via := []*http.Request{{URL: &url.URL{Scheme: "https", Host: "embed.internal"}}}
	if err := (Rule{}).redirect(req, via); err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("https → http redirect: err = %v, want a refusal", err)
	}
	req, _ = http.NewRequest(http.MethodGet, "http://localhost:9/v1", nil)
	if err := (Rule{}).redirect(req, via); err != nil {
		t.Errorf("https → loopback http redirect: %v", err)
	}
}
