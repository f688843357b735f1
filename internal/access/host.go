package access

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/internal/fetch"
)

// HostCheck guards every route (RCP, MCP, metrics, health) against a web
// page reaching the sidecar through a browser, decided per request under
// the live policy, so a reload that adds or removes keys changes it at
// once:
//
//   - Without keys or tokens, a request that arrived at a loopback address
//     must name a loopback host (localhost, 127.0.0.1, ::1 — any case, a
//     final dot, any port) or one of Options.AllowedHosts. A page on a
//     name its owner points at 127.0.0.1 (DNS rebinding) is same-origin
//     to the browser, so only the Host header tells it apart.
//   - Always, an Origin header, when present, must be the request's own
//     origin (its host and port equal to Host) or one of
//     Options.AllowedOrigins ("*" for any); "null" is nobody's own origin.
//     This is the MCP Streamable HTTP transport's Origin validation, and
//     the RCP endpoint's CORS rule.
//
// A refusal is HTTP 403 with the -32012 body of every other refusal.
func (g *Guard) HostCheck(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pol := g.pol.Load()
		if !pol.authenticating() && atLoopback(r) && !pol.hostAllowed(r.Host) {
			g.refused(slog.LevelWarn, "host", "rejected request: Host not allowed on a loopback listener without keys", "remote", r.RemoteAddr, "path", r.URL.Path, "host", r.Host)
			deny(w, http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !g.originAllowed(o, r.Host) {
			g.refused(slog.LevelWarn, "origin", "rejected request: Origin not allowed", "remote", r.RemoteAddr, "path", r.URL.Path, "origin", o)
			deny(w, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// atLoopback reports whether r arrived at a loopback address of this
// machine (127.0.0.0/8, ::1, or either mapped into IPv6). A request whose
// local address is unknown counts as loopback: the stricter reading.
func atLoopback(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return true
	}
	ap, err := netip.ParseAddrPort(la.String())
	if err != nil {
		return true
	}
	return ap.Addr().Unmap().IsLoopback()
}

// hostName is the host of a Host header value, without its port, lower
// case, without a final dot.
func hostName(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// hostAllowed reports whether Host value hostport names a loopback host
// or an allowed one.
func (pol *policy) hostAllowed(hostport string) bool {
	h := hostName(hostport)
	return h != "" && (fetch.Loopback(h) || slices.Contains(pol.hosts, h))
}

// normalHosts is the allow-list in the form hostName compares.
func normalHosts(hs []string) []string {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		if n := hostName(h); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// originAllowed reports whether a request to host may come from a page
// of origin.
func (g *Guard) originAllowed(origin, host string) bool {
	if slices.Contains(g.origins, origin) || slices.Contains(g.origins, "*") {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" {
		return false
	}
	return strings.EqualFold(u.Host, host)
}
