package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

const jwtHead = `
backends:
  - name: docs
    engine: fake
    settings: {url: http://127.0.0.1:9200}
access:
`

// TestJWTConfig: a minimal jwt block gets its defaults, a complete OIDC
// block decodes, and every block that would admit forged or unscoped
// tokens is refused with the key that is wrong.
func TestJWTConfig(t *testing.T) {
	const ok = `  jwt:
    issuer: https://login.example.com/
    audience: [rcp-sidecar]
    jwks_url: https://login.example.com/.well-known/jwks.json
`
	tests := []struct {
		name, block, wantErr string
	}{
		{"minimal", ok, ""},
		{"oidc with tenants", ok + `    algorithms: [RS256, ES256]
    clock_skew: 30s
    claims: {subject: sub, scopes: scp, engines: rcp_engines, tenant: org_id}
    scopes: {read: rcp.read, write: rcp.write, admin: rcp.admin}
    tenant_field: tenant
    id_prefix: "org-"
    rate: {rps: 20, burst: 40}
`, ""},
		{"loopback http jwks", strings.Replace(ok, "https://login.example.com/.well-known", "http://127.0.0.1:8081", 1), ""},
		{"no issuer", strings.Replace(ok, "issuer: https://login.example.com/", "issuer: \"\"", 1), "access.jwt.issuer"},
		{"no audience", strings.Replace(ok, "audience: [rcp-sidecar]", "audience: []", 1), "access.jwt.audience"},
		{"plain http jwks", strings.Replace(ok, "https://login.example.com/.well-known", "http://login.example.com", 1), "access.jwt.jwks_url"},
		{"jwks with credentials", strings.Replace(ok, "https://login.example.com/.well-known", "https://u:p@login.example.com/.well-known", 1), "access.jwt.jwks_url"},
		{"alg none", ok + "    algorithms: [none]\n", "access.jwt.algorithms"},
		{"HMAC", ok + "    algorithms: [RS256, HS256]\n", "access.jwt.algorithms"},
		{"skew too large", ok + "    clock_skew: 1h\n", "access.jwt.clock_skew"},
		{"min refresh under 1s", ok + "    jwks_min_refresh: 10ms\n", "access.jwt"},
		{"tenant without filter field", ok + "    claims: {tenant: org_id}\n", "access.jwt.tenant_field"},
		{"typo", ok + "    audiance: [x]\n", `unknown key "access.jwt.audiance"`},
		{"resource without audience", strings.Replace(ok, "audience: [rcp-sidecar]", "resource: https://search.example.com/mcp", 1), ""},
		{"resource among the audiences", strings.Replace(ok, "audience: [rcp-sidecar]",
			"resource: https://search.example.com/mcp\n    audience: [rcp-sidecar, https://search.example.com/mcp]", 1), ""},
		{"loopback http resource", strings.Replace(ok, "audience: [rcp-sidecar]", "resource: http://127.0.0.1:8080/mcp", 1), ""},
		{"audience without the resource", ok + "    resource: https://search.example.com/mcp\n", "access.jwt.audience: must contain resource"},
		{"plain http resource", strings.Replace(ok, "audience: [rcp-sidecar]", "resource: http://search.example.com/mcp", 1), "access.jwt.resource: must be https"},
		{"relative resource", strings.Replace(ok, "audience: [rcp-sidecar]", "resource: /mcp", 1), "access.jwt.resource: must be an absolute"},
		{"resource with a fragment", strings.Replace(ok, "audience: [rcp-sidecar]", `resource: "https://search.example.com/mcp#a"`, 1), "access.jwt.resource: must have neither"},
		{"resource with a query", strings.Replace(ok, "audience: [rcp-sidecar]", "resource: https://search.example.com/mcp?t=a", 1), "access.jwt.resource: must have neither"},
		{"key inside the token namespace", ok + `    claims: {tenant: org_id}
    tenant_field: tenant
    id_prefix: "org-"
  keys:
    - {id: k, hash: "sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8", write: true, id_prefix: "org-acme/", filter: {field: tenant, op: eq, value: globex}}
`, "access.keys[0].id_prefix"},
		{"key that is the same tenant", ok + `    claims: {tenant: org_id}
    tenant_field: tenant
    id_prefix: "org-"
  keys:
    - {id: k, hash: "sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8", write: true, id_prefix: "org-acme/", filter: {field: tenant, op: eq, value: acme}}
`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(jwtHead+tt.block), registry)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			case tt.wantErr == "" && tt.name == "minimal":
				j := cfg.Access.JWT
				if j == nil || j.ClockSkew != time.Minute || j.JWKSRefresh != 10*time.Minute || j.JWKSMinRefresh != 30*time.Second ||
					len(j.Algorithms) != 1 || j.Algorithms[0] != "RS256" || j.Claims.Subject != "sub" || j.Claims.Scopes != "scope" {
					t.Fatalf("defaults not applied: %+v", j)
				}
			case tt.wantErr == "" && tt.name == "resource without audience":
				if j := cfg.Access.JWT; len(j.Audience) != 1 || j.Audience[0] != "https://search.example.com/mcp" {
					t.Fatalf("audience %v, want the resource", j.Audience)
				}
			}
		})
	}
	cfg, err := config.Parse([]byte(jwtHead+"  max_inflight: 1\n"), registry)
	if err != nil || cfg.Access.JWT != nil {
		t.Fatalf("no jwt block must leave JWT nil: %+v %v", cfg.Access.JWT, err)
	}
}
