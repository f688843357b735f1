// Package fetch is the one rule for every URL the sidecar fetches on its
// own (a JWKS, the embedder, the reranker, the feedback index): an
// absolute http(s) URL without credentials, https where the rule asks for
// it (plain http then only on a loopback host), and the same rule applied
// again to every redirect, of which a fetch follows at most MaxRedirects.
// A redirect never leaves https for plain http off loopback, so a
// configured https endpoint cannot be turned into a cleartext one.
package fetch

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// MaxRedirects bounds the redirects one fetch follows.
const MaxRedirects = 3

// Rule is what a URL the sidecar fetches must satisfy.
type Rule struct {
	// TLS requires https; plain http is then allowed only on a loopback
	// host (Loopback).
	TLS bool
}

// Loopback reports whether host (no port; an IPv6 literal with or
// without brackets) names this machine in a way no DNS answer can change:
// localhost, 127.0.0.1 or ::1. Other 127/8 addresses are not loopback to
// this rule: a host is trusted by name, not by where it happens to route.
func Loopback(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if h == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(h)
	if err != nil || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	return a == netip.MustParseAddr("127.0.0.1") || a == netip.IPv6Loopback()
}

// Check returns why u breaks r, nil when it does not.
func (r Rule) Check(u *url.URL) error {
	switch {
	case u == nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		return errors.New("must be an absolute http(s) URL")
	case u.User != nil:
		return errors.New("must not carry credentials")
	case r.TLS && u.Scheme != "https" && !Loopback(u.Hostname()):
		return errors.New("must be https (http only on a loopback host)")
	}
	return nil
}

// CheckString parses s and checks it (Check).
func (r Rule) CheckString(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("must be an absolute http(s) URL")
	}
	return r.Check(u)
}

// Client returns a copy of c (nil: a client on http.DefaultTransport)
// whose redirects follow the rule: at most MaxRedirects, each target
// checked by r, and a fetch that began on https stays on https unless the
// target is a loopback host. A refused redirect fails the fetch.
func (r Rule) Client(c *http.Client) *http.Client {
	var cl http.Client
	if c != nil {
		cl = *c
	}
	cl.CheckRedirect = r.redirect
	return &cl
}

func (r Rule) redirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("redirect refused: more than %d redirects", MaxRedirects)
	}
	hop := r
	if len(via) > 0 && via[0].URL.Scheme == "https" {
		hop.TLS = true // no downgrade to cleartext
	}
	if err := hop.Check(req.URL); err != nil {
		return fmt.Errorf("redirect to %s refused: %w", req.URL.Redacted(), err)
	}
	return nil
}

// CheckResource checks a resource identifier (RFC 8707 §2): a URL that
// names a protected resource rather than one fetched, under rule
// Rule{TLS: true} (https; http only on a loopback host), without a query
// or a fragment.
func CheckResource(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("must be an absolute http(s) URL")
	}
	if err := (Rule{TLS: true}).Check(u); err != nil {
		return err
	}
	if u.Fragment != "" || strings.Contains(s, "#") || u.RawQuery != "" || u.ForceQuery {
		return errors.New("must have neither a query nor a fragment")
	}
	return nil
}
