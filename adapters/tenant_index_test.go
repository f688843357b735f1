package adapters_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// TestHostileTenantIndexNameEscaping. Attack: a tenant value chosen to
// make its index name address another index: a pattern (*), a list (,), a
// path (..), the other tenant in upper case (which engines would refuse or
// lower-case), _all, or a value whose escape spells another tenant.
// Guarantee: every value maps to its own name, inside the template, in
// the index-name alphabet, and distinct values never share a name.
func TestHostileTenantIndexNameEscaping(t *testing.T) {
	const tpl = "docs-{tenant}"
	for _, tc := range []struct{ tenant, want string }{
		{"acme", "docs-acme"},
		{"acme-eu", "docs-acme-eu"},
		{"ACME", "docs-_41_43_4d_45"},
		{"*", "docs-_2a"},
		{"acme*", "docs-acme_2a"},
		{"acme,globex", "docs-acme_2cglobex"},
		{"..", "docs-_2e_2e"},
		{"../globex", "docs-_2e_2e_2fglobex"},
		{"_all", "docs-_5fall"},
		{"_41cme", "docs-_5f41cme"},
		{"a b", "docs-a_20b"},
		{"ä", "docs-_c3_a4"},
		{"#x?y", "docs-_23x_3fy"},
	} {
		got, err := adapters.TenantIndexName(tpl, tc.tenant)
		if err != nil || got != tc.want {
			t.Errorf("TenantIndexName(%q) = %q, %v; want %q", tc.tenant, got, err, tc.want)
		}
		if strings.ContainsAny(strings.TrimPrefix(got, "docs-"), `*,/\?"<>| #:.ABCDEFGHIJKLMNOPQRSTUVWXYZ`) {
			t.Errorf("%q: name %q leaves the index-name alphabet", tc.tenant, got)
		}
	}
	seen := map[string]string{}
	for _, v := range []string{"a", "A", "_61", "_", "-", "_2d", "a_", "a_5f", "ab", "a.b", "a_2eb", "", "x\x00"} {
		name, err := adapters.TenantIndexName(tpl, v)
		if v == "" {
			if err == nil {
				t.Error("an empty tenant has an index")
			}
			continue
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("tenants %q and %q share index %q", prev, v, name)
		}
		seen[name] = v
	}
	if _, err := adapters.TenantIndexName(tpl, strings.Repeat("A", 100)); err == nil {
		t.Error("a 305-byte index name was accepted")
	}
}

// TestTenantTemplateAndMapping: templates that would let a tenant value
// reach outside its own name, and mapping bodies with aliases, are
// refused at configuration time.
func TestTenantTemplateAndMapping(t *testing.T) {
	for tpl, ok := range map[string]bool{
		"docs-{tenant}": true, "t.{tenant}.v2": true, "{tenant}-docs": false, "docs": false,
		"docs-{tenant}-{tenant}": false, "Docs-{tenant}": false, "docs*{tenant}": false, "docs,{tenant}": false,
		"_docs-{tenant}": false, "docs/{tenant}": false, "-{tenant}": false,
	} {
		if err := adapters.ValidateTenantTemplate(tpl); (err == nil) != ok {
			t.Errorf("ValidateTenantTemplate(%q) = %v, want ok=%v", tpl, err, ok)
		}
	}
	for body, ok := range map[string]bool{
		`{"mappings":{"properties":{}}}`: true, `{"settings":{"number_of_shards":1},"mappings":{}}`: true,
		`{"settings":{}}`: false, `{"mappings":{},"aliases":{"docs-all":{}}}`: false, `[]`: false, `{"mappings":[]}`: false,
	} {
		if err := adapters.ValidateTenantMapping(json.RawMessage(body)); (err == nil) != ok {
			t.Errorf("ValidateTenantMapping(%s) = %v, want ok=%v", body, err, ok)
		}
	}
}
