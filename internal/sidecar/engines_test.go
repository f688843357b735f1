package sidecar

import (
	"context"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// invalidSettings are, per engine, settings its Config refuses and the
// same mistake as a Config value.
var invalidSettings = map[string]struct {
	yaml string
	cfg  func(adapters.Factory) adapters.Config
}{
	"memory":        {`{k1: -1}`, func(adapters.Factory) adapters.Config { return &memory.Config{K1: -1, B: 0.75} }},
	"elasticsearch": {`{index: a}`, defaults},      // no urls
	"opensearch":    {`{index: a}`, defaults},      // no urls
	"qdrant":        {`{collection: c}`, defaults}, // no address
}

// defaults is an engine's default Config (which lacks required settings).
func defaults(f adapters.Factory) adapters.Config { return f.NewConfig() }

// Every engine refuses invalid settings when the configuration is loaded,
// and its Factory.Open refuses an invalid Config when called directly
// (adapters.Validating checks it; the adapter's open does not again).
func TestEnginesRefuseInvalidSettings(t *testing.T) {
	reg := Registry()
	for _, name := range reg.Names() {
		bad, ok := invalidSettings[name]
		if !ok {
			t.Errorf("engine %s: no invalid settings to test with", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			if _, err := config.Parse([]byte("backends:\n  - {name: b, engine: "+name+", settings: "+bad.yaml+"}\n"), reg); err == nil {
				t.Error("config.Parse accepted invalid settings")
			}
			f, _ := reg.Lookup(name)
			cfg := bad.cfg(f)
			want := cfg.Validate()
			if want == nil {
				t.Fatal("the test's Config is valid")
			}
			ad, err := f.Open(context.Background(), cfg, adapters.Deps{})
			if err == nil {
				ad.Close()
				t.Fatal("Factory.Open accepted an invalid Config")
			}
			if err.Error() != want.Error() {
				t.Errorf("Factory.Open = %v, want the Config's own error %v", err, want)
			}
		})
	}
}
