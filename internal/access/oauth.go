package access

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/rcp-sidecar/rcp-sidecar/internal/fetch"
)

// MetadataPath is where Protected Resource Metadata (RFC 9728) is served:
// at this path, and at this path followed by the resource's own path (the
// path-suffixed form a client derives from the resource URL, §3.1).
const MetadataPath = "/.well-known/oauth-protected-resource"

// resourceServer is the OAuth 2.1 resource server a JWT configuration
// with a Resource makes of the sidecar (the MCP authorization
// specification): its metadata document, where that document is, and the
// scopes its challenges name.
type resourceServer struct {
	// metadataURL is the public URL of the metadata document (the
	// resource_metadata of every challenge).
	metadataURL string
	// paths are the request paths the metadata document is served at.
	paths []string
	// read and write are the scopes a caller needs to read and to write
	// ("" when not configured).
	read, write string
	doc         http.Handler
}

// newResourceServer builds the resource server of c; nil when c has no
// Resource. c's Audience must contain the resource, so that a token
// issued for it (RFC 8707) is accepted.
func newResourceServer(c JWT) (*resourceServer, error) {
	if c.Resource == "" {
		return nil, nil
	}
	if err := fetch.CheckResource(c.Resource); err != nil {
		return nil, fmt.Errorf("access: jwt: resource %w", err)
	}
	u, _ := url.Parse(c.Resource)
	if !slices.Contains(c.Audience, c.Resource) {
		return nil, errors.New("access: jwt: audience must contain the resource, which is the audience its tokens are issued for")
	}
	// RFC 9728 §3.1: the resource's path, without a final slash, follows
	// the well-known path.
	path := strings.TrimSuffix(u.Path, "/")
	rs := &resourceServer{read: c.ReadScope, write: c.WriteScope, paths: []string{MetadataPath}}
	if path != "" {
		rs.paths = append(rs.paths, MetadataPath+path)
	}
	rs.metadataURL = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: MetadataPath + path}).String()
	var scopes []string
	for _, s := range []string{c.ReadScope, c.WriteScope, c.AdminScope} {
		if s != "" && !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	// The document holds the RFC 9728 fields a client needs and nothing
	// else of the configuration.
	rs.doc = auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               c.Resource,
		AuthorizationServers:   []string{c.Issuer},
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
	})
	return rs, nil
}

// otherSpelling is resource with a final slash when it has none, and
// without it when it has one: authorization servers and clients differ
// on whether "https://host/mcp" and "https://host/mcp/" (or "https://host"
// and "https://host/", which a URL parser makes of it) name the
// resource, so a token's audience may be either. Nothing else is folded:
// another scheme, host, port or path is another resource.
func otherSpelling(resource string) string {
	if s, ok := strings.CutSuffix(resource, "/"); ok {
		return s
	}
	return resource + "/"
}

// challenge is a Bearer WWW-Authenticate value (RFC 6750 §3) naming the
// metadata document and scope; errCode is "" or an RFC 6750 error code.
func (rs *resourceServer) challenge(errCode, scope string) string {
	params := []string{fmt.Sprintf("resource_metadata=%q", rs.metadataURL)}
	if scope != "" {
		params = append(params, fmt.Sprintf("scope=%q", scope))
	}
	if errCode != "" {
		params = append(params, fmt.Sprintf("error=%q", errCode))
	}
	return "Bearer " + strings.Join(params, ", ")
}

// writeScope is the scope a write needs: the read scope and the write
// scope (a token without the read scope is not admitted at all).
func (rs *resourceServer) writeScope() string {
	return strings.TrimSpace(rs.read + " " + rs.write)
}

// serves reports whether path is one the metadata document is served at.
func (rs *resourceServer) serves(path string) bool {
	return slices.Contains(rs.paths, path)
}

// resource is the resource server of pol, nil without one.
func (pol *policy) resource() *resourceServer {
	if pol.jwt == nil {
		return nil
	}
	return pol.jwt.rs
}

// unauthenticated answers 401: with the resource server's challenge
// (error invalid_token when a credential was presented) when there is
// one, else the realm of earlier versions.
func unauthenticated(w http.ResponseWriter, r *http.Request, pol *policy) {
	if rs := pol.resource(); rs != nil {
		code := ""
		if presented(r) != "" {
			code = "invalid_token"
		}
		w.Header().Set("WWW-Authenticate", rs.challenge(code, rs.read))
	} else {
		w.Header().Set("WWW-Authenticate", `Bearer realm="rcp"`)
	}
	deny(w, http.StatusUnauthorized)
}

// insufficientScope answers 403 to a verified token that lacks scope, with
// the resource server's insufficient_scope challenge when there is one.
func insufficientScope(w http.ResponseWriter, pol *policy, scope string) {
	if rs := pol.resource(); rs != nil {
		w.Header().Set("WWW-Authenticate", rs.challenge("insufficient_scope", scope))
	}
	deny(w, http.StatusForbidden)
}

// RefuseWrite answers a write by the caller of r whose token lacks the
// write scope, and reports whether it did: HTTP 403 with the
// insufficient_scope challenge naming the read and write scopes, so that
// an OAuth client can ask its authorization server for them (step-up).
// Only a token's caller under a resource server is answered; any other
// caller is left to the handler (a read-only key sees no write tools).
func (g *Guard) RefuseWrite(w http.ResponseWriter, r *http.Request) bool {
	p := FromContext(r.Context())
	pol := g.pol.Load()
	rs := pol.resource()
	if p == nil || !p.token || p.write || rs == nil {
		return false
	}
	g.refused(slog.LevelInfo, "scope", "rejected request: token lacks the write scope", "key", p.id, "path", r.URL.Path)
	insufficientScope(w, pol, rs.writeScope())
	return true
}
