package adapters

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// TenantPlaceholder is where a tenant index template puts the tenant.
const TenantPlaceholder = "{tenant}"

// maxIndexName is the longest index name Elasticsearch and OpenSearch
// accept, in bytes.
const maxIndexName = 255

// TenantIndex configures index isolation (tenancy mode "index") for an
// adapter whose Factory has TenantIndices: each tenant's documents live in
// the index TenantIndexName(Template, tenant), created on the tenant's
// first write from Mapping.
type TenantIndex struct {
	// Template names a tenant's index, e.g. "docs-{tenant}".
	Template string
	// Mapping is the body of the create-index request (settings,
	// mappings) a tenant's index is created from. Capabilities are derived
	// from it, so every tenant's index serves the same ones.
	Mapping json.RawMessage
}

// ValidateTenantTemplate checks a tenant index template: exactly one
// {tenant}, a literal start, and only lower-case letters, digits, '-',
// '_' and '.' around it, so that no tenant value can make the name a
// pattern, a list, a path or another index's name.
func ValidateTenantTemplate(template string) error {
	if strings.Count(template, TenantPlaceholder) != 1 {
		return fmt.Errorf("index template %q must contain %s exactly once", template, TenantPlaceholder)
	}
	literal := strings.Replace(template, TenantPlaceholder, "", 1)
	for _, c := range literal {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("index template %q: %q is not allowed (lower-case letters, digits, '-', '_' and '.' only)", template, c)
		}
	}
	if c := template[0]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
		return fmt.Errorf("index template %q must start with a lower-case letter or a digit", template)
	}
	return nil
}

// EscapeTenant maps any tenant value to the index-name alphabet,
// injectively: lower-case letters, digits and '-' stand for themselves and
// every other byte (upper case, '_', '.', '*', ',', '/', non-ASCII, …) is
// '_' followed by two hex digits. Distinct values give distinct names, so
// no value can address another tenant's index ("ACME" is "_41_43_4d_45",
// "_all" is "_5fall", "*" is "_2a").
func EscapeTenant(tenant string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(tenant); i++ {
		c := tenant[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

// TenantIndexName returns the index of tenant under template (which
// ValidateTenantTemplate accepted): the escaped tenant in place of
// {tenant}. An empty tenant or a name over 255 bytes is an error.
func TenantIndexName(template, tenant string) (string, error) {
	if tenant == "" {
		return "", errors.New("empty tenant")
	}
	name := strings.Replace(template, TenantPlaceholder, EscapeTenant(tenant), 1)
	if len(name) > maxIndexName {
		return "", fmt.Errorf("the index name of tenant %q would be %d bytes long (at most %d)", tenant, len(name), maxIndexName)
	}
	return name, nil
}

// ValidateTenantMapping checks a create-index body: a JSON object with a
// "mappings" object and nothing but "settings" beside it. Aliases are not
// accepted: an alias shared by tenant indices would let one tenant's name
// reach the others.
func ValidateTenantMapping(body json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("the tenant index mapping is not a JSON object: %w", err)
	}
	for k := range m {
		if k != "settings" && k != "mappings" {
			return fmt.Errorf("the tenant index mapping has key %q; only settings and mappings", k)
		}
	}
	var mappings map[string]json.RawMessage
	if err := json.Unmarshal(m["mappings"], &mappings); err != nil || mappings == nil {
		return errors.New(`the tenant index mapping needs a "mappings" object`)
	}
	return nil
}
