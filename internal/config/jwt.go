package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/internal/fetch"
)

// JWT accepts bearer tokens from an OIDC provider (or any JWT issuer that
// publishes its keys as a JWKS) alongside the static keys. Each verified
// token becomes a caller with the scopes a static key has: the scope
// claim grants read, write and admin; an engines claim narrows the
// engines; the tenant claim's value becomes the tenant filter value (and
// the tenant of an index-per-tenant backend) — never a client field.
type JWT struct {
	// Issuer must equal the token's iss exactly.
	Issuer string `mapstructure:"issuer" json:"issuer"`
	// Audience: the token's aud must contain one of these. Defaults to
	// [resource] when resource is set, and must then contain it.
	Audience []string `mapstructure:"audience" json:"audience"`
	// Resource, when set, is the public URL of the MCP endpoint as
	// clients reach it (https; http only on a loopback host): the
	// sidecar is then an OAuth 2.1 resource server for it, serving
	// Protected Resource Metadata (RFC 9728) and accepting tokens issued
	// for it (RFC 8707 audience).
	Resource string `mapstructure:"resource" json:"resource,omitempty"`
	// JWKSURL serves the issuer's signing keys (https; http only on a
	// loopback host).
	JWKSURL string `mapstructure:"jwks_url" json:"jwks_url"`
	// JWKSCAFile verifies the JWKS server with this CA instead of the
	// system roots.
	JWKSCAFile string `mapstructure:"jwks_ca_file" json:"jwks_ca_file,omitempty"`
	// Algorithms the token's alg must be one of; asymmetric only (RS*,
	// PS*, ES*, EdDSA). Default [RS256].
	Algorithms []string `mapstructure:"algorithms" json:"algorithms"`
	// ClockSkew is the leeway on exp, nbf and iat (default 60s, at most 5m).
	ClockSkew time.Duration `mapstructure:"clock_skew" json:"clock_skew"`
	// JWKSRefresh is how long fetched keys are used before a new fetch
	// (default 10m).
	JWKSRefresh time.Duration `mapstructure:"jwks_refresh" json:"jwks_refresh"`
	// JWKSMinRefresh is the least time between two fetches, also when
	// tokens name unknown kids (default 30s).
	JWKSMinRefresh time.Duration `mapstructure:"jwks_min_refresh" json:"jwks_min_refresh"`
	// JWKSTimeout bounds one fetch (default 5s).
	JWKSTimeout time.Duration `mapstructure:"jwks_timeout" json:"jwks_timeout"`
	// Claims name the claims the caller is built from.
	Claims JWTClaims `mapstructure:"claims" json:"claims"`
	// Scopes name the scope values that grant read, write and admin.
	Scopes JWTScopes `mapstructure:"scopes" json:"scopes"`
	// TenantField is the filter field matched against the tenant claim's
	// value on backends whose tenants share an index.
	TenantField string `mapstructure:"tenant_field" json:"tenant_field,omitempty"`
	// IDPrefix starts each tenant's id namespace, <id_prefix><tenant>/.
	IDPrefix string `mapstructure:"id_prefix" json:"id_prefix,omitempty"`
	// Rate is each caller's token bucket (per subject and scope).
	Rate Rate `mapstructure:"rate" json:"rate"`
}

// JWTClaims names the claims of a token that the caller is built from.
type JWTClaims struct {
	// Subject names the caller in logs and scopes its cursors (default sub).
	Subject string `mapstructure:"subject" json:"subject"`
	// Scopes holds the granted scopes, space-separated or an array
	// (default scope; Azure AD uses scp).
	Scopes string `mapstructure:"scopes" json:"scopes"`
	// Engines, when set, holds the backends the caller may address; a
	// token without it is refused.
	Engines string `mapstructure:"engines" json:"engines,omitempty"`
	// Tenant, when set, holds the caller's tenant; a token without it (or
	// with a non-string value) is refused.
	Tenant string `mapstructure:"tenant" json:"tenant,omitempty"`
}

// JWTScopes are the scope values that grant access. Read, when set, must
// be present for any request; without Write a token cannot write.
type JWTScopes struct {
	Read  string `mapstructure:"read" json:"read,omitempty"`
	Write string `mapstructure:"write" json:"write,omitempty"`
	Admin string `mapstructure:"admin" json:"admin,omitempty"`
}

// applyJWTDefaults fills the unset settings of a present jwt block.
func applyJWTDefaults(j *JWT) {
	if j == nil {
		return
	}
	if len(j.Algorithms) == 0 {
		j.Algorithms = []string{"RS256"}
	}
	if len(j.Audience) == 0 && j.Resource != "" {
		j.Audience = []string{j.Resource}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&j.ClockSkew, time.Minute)
	def(&j.JWKSRefresh, 10*time.Minute)
	def(&j.JWKSMinRefresh, 30*time.Second)
	def(&j.JWKSTimeout, 5*time.Second)
	if j.Claims.Subject == "" {
		j.Claims.Subject = "sub"
	}
	if j.Claims.Scopes == "" {
		j.Claims.Scopes = "scope"
	}
}

// validate checks the jwt block: what a token must prove, and that the
// tenant mapping can scope every backend the way a static key would.
func (j *JWT) validate(keys []AccessKey) error {
	const p = "access.jwt"
	switch {
	case j.Issuer == "":
		return errors.New(p + ".issuer: required")
	case len(j.Audience) == 0 || slices.Contains(j.Audience, ""):
		return errors.New(p + ".audience: required, without empty values")
	case j.ClockSkew < 0 || j.ClockSkew > 5*time.Minute:
		return errors.New(p + ".clock_skew: between 0s and 5m")
	case j.JWKSRefresh < j.JWKSMinRefresh || j.JWKSMinRefresh < time.Second || j.JWKSTimeout <= 0:
		return errors.New(p + ": jwks_min_refresh (at least 1s) must not exceed jwks_refresh, and jwks_timeout must be positive")
	case j.Rate.RPS < 0 || j.Rate.Burst < 0:
		return errors.New(p + ".rate: rps and burst must not be negative")
	}
	if err := (fetch.Rule{TLS: true}).CheckString(j.JWKSURL); err != nil {
		return fmt.Errorf("%s.jwks_url: %w", p, err)
	}
	if j.Resource != "" {
		if err := fetch.CheckResource(j.Resource); err != nil {
			return fmt.Errorf("%s.resource: %w", p, err)
		}
		if !slices.Contains(j.Audience, j.Resource) {
			return fmt.Errorf("%s.audience: must contain resource %q (tokens are issued for the resource), or be left out", p, j.Resource)
		}
	}
	for _, a := range j.Algorithms {
		if a == "" || strings.EqualFold(a, "none") || strings.HasPrefix(strings.ToUpper(a), "HS") {
			return fmt.Errorf("%s.algorithms: %q is not allowed: only asymmetric algorithms (RS*, PS*, ES*, EdDSA)", p, a)
		}
	}
	return j.validatePrefixes(keys)
}

// validatePrefixes refuses a static key whose id_prefix lies inside the
// tokens' namespace (<id_prefix><tenant>/) unless it is exactly the
// namespace of one tenant and has that tenant's filter, so that a static
// key and a token can only share ids when they are the same tenant.
func (j *JWT) validatePrefixes(keys []AccessKey) error {
	if j.Claims.Tenant == "" {
		return nil
	}
	for i := range keys {
		k := &keys[i]
		if k.IDPrefix == "" || !(strings.HasPrefix(k.IDPrefix, j.IDPrefix) || strings.HasPrefix(j.IDPrefix, k.IDPrefix)) {
			continue
		}
		tenant, ok := strings.CutSuffix(strings.TrimPrefix(k.IDPrefix, j.IDPrefix), "/")
		f, _ := k.FilterJSON()
		same := ok && len(k.IDPrefix) > len(j.IDPrefix) && !strings.Contains(tenant, "/") && j.TenantField != "" &&
			string(f) == fmt.Sprintf(`{"field":%q,"op":"eq","value":%q}`, j.TenantField, tenant)
		if !same {
			return fmt.Errorf("access.keys[%d].id_prefix: %q overlaps the id namespace of access.jwt tenants (%q<tenant>/)", i, k.IDPrefix, j.IDPrefix)
		}
	}
	return nil
}

// validateTenancy checks that tokens with a tenant claim are scoped on
// every backend: a shared index needs tenant_field (the filter).
func (j *JWT) validateTenancy(backends []Backend) error {
	if j == nil || j.Claims.Tenant == "" {
		return nil
	}
	for _, b := range backends {
		if !b.Tenancy.Isolated() && j.TenantField == "" {
			return fmt.Errorf("access.jwt.tenant_field: required, backend %s keeps tenants in one shared index where only a filter scopes a caller", b.Name)
		}
	}
	return nil
}
