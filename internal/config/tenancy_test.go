package config_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// tenancyRegistry has an engine that can isolate tenants by index and
// one that cannot.
var tenancyRegistry = adapters.NewRegistry(
	adapters.Factory{Name: "fake", NewConfig: func() adapters.Config { return &fakeConfig{} },
		Open: func(context.Context, adapters.Config, adapters.Deps) (adapters.Adapter, error) {
			return nil, errors.New("no")
		}},
	adapters.Factory{Name: "isolating", NewConfig: func() adapters.Config { return &fakeConfig{} }, TenantIndices: true,
		Open: func(context.Context, adapters.Config, adapters.Deps) (adapters.Adapter, error) {
			return nil, errors.New("no")
		}},
)

// TestTenancyConfig: `config check` validates the tenancy block and every
// key's tenant scope against the mode of each backend it may address.
func TestTenancyConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "mapping.json")
	aliased := filepath.Join(dir, "aliased.json")
	if err := os.WriteFile(good, []byte(`{"settings":{"number_of_shards":1},"mappings":{"properties":{"text":{"type":"text"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(aliased, []byte(`{"mappings":{},"aliases":{"docs-all":{}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const hash = `"sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"`
	backend := func(engine, tenancy string) string {
		return "backends:\n  - {name: docs, engine: " + engine + ", settings: {url: http://x}, tenancy: " + tenancy + "}\n"
	}
	keys := func(k string) string { return "access:\n  keys:\n    - {id: k, hash: " + hash + ", " + k + "}\n" }
	for _, tc := range []struct {
		name, yaml, wantErr string
	}{
		{"defaults", backend("fake", "{}"), ""},
		{"shared with allow-list", backend("fake", "{meta_fields: [lang, author.name]}"), ""},
		{"bad meta path", backend("fake", "{meta_fields: [\"a..b\"]}"), "backends[0].tenancy.meta_fields[0]"},
		{"bad mode", backend("fake", "{mode: separate}"), `backends[0].tenancy.mode: "separate"`},
		{"index on an engine that cannot", backend("fake", "{mode: index, index: \"docs-{tenant}\", mapping_file: "+good+"}"), "engine fake cannot keep each tenant"},
		{"index mode", backend("isolating", "{mode: index, index: \"docs-{tenant}\", mapping_file: "+good+"}"), ""},
		{"index without template", backend("isolating", "{mode: index, mapping_file: "+good+"}"), "needs index"},
		{"template without placeholder", backend("isolating", "{mode: index, index: docs, mapping_file: "+good+"}"), "backends[0].tenancy.index"},
		{"template with pattern", backend("isolating", "{mode: index, index: \"docs*{tenant}\", mapping_file: "+good+"}"), "backends[0].tenancy.index"},
		{"missing mapping file", backend("isolating", "{mode: index, index: \"docs-{tenant}\", mapping_file: "+dir+"/nope.json}"), "backends[0].tenancy.mapping_file"},
		{"aliases in mapping", backend("isolating", "{mode: index, index: \"docs-{tenant}\", mapping_file: "+aliased+"}"), "aliases"},
		{"template in shared mode", backend("fake", "{index: \"docs-{tenant}\"}"), "apply to mode index only"},
		{"tenant alone on shared", backend("fake", "{}") + keys("tenant: acme"), "access.keys[0].tenant: backend docs keeps tenants in one shared index"},
		{"filter without prefix on shared", backend("fake", "{}") + keys("write: true, filter: {field: t, op: eq, value: a}"), "access.keys[0].id_prefix: required"},
		{"filter without tenant on index", backend("isolating", "{mode: index, index: \"docs-{tenant}\", mapping_file: "+good+"}") + keys("filter: {field: t, op: eq, value: a}"), "access.keys[0].tenant: backend docs keeps each tenant in an index of its own"},
		{"tenant on index", backend("isolating", "{mode: index, index: \"docs-{tenant}\", mapping_file: "+good+"}") + keys("write: true, tenant: \"ACME/*\""), ""},
		{"tenant too long", backend("isolating", "{mode: index, index: \"docs-{tenant}\", mapping_file: "+good+"}") + keys("tenant: "+strings.Repeat("X", 90)), "access.keys[0].tenant: the index name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.yaml), tenancyRegistry)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				tn := cfg.Backends[0].Tenancy
				if tn.Mode == "" || tn.MaxNewFields == nil || tn.Isolated() && *tn.MaxNewFields != -1 {
					t.Fatalf("defaults not resolved: %+v", tn)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// TestTenancyDefaults: the new-field budget is 32 without an allow-list
// and 0 with one, unless set (mode index: see TestTenancyConfig).
func TestTenancyDefaults(t *testing.T) {
	for tenancy, want := range map[string]int{
		"{}": retrieval.DefaultMaxNewFields, "{meta_fields: [lang]}": 0, "{meta_fields: [lang], max_new_fields: 4}": 4, "{max_new_fields: -1}": -1,
	} {
		cfg, err := config.Parse([]byte("backends:\n  - {name: docs, engine: fake, settings: {url: http://x}, tenancy: "+tenancy+"}\n"), tenancyRegistry)
		if err != nil {
			t.Fatal(err)
		}
		if got := *cfg.Backends[0].Tenancy.MaxNewFields; got != want || cfg.Backends[0].Tenancy.Mode != config.TenancyShared {
			t.Errorf("%s: max_new_fields %d mode %q, want %d shared", tenancy, got, cfg.Backends[0].Tenancy.Mode, want)
		}
	}
}
