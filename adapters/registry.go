package adapters

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
)

// Config is an engine's own settings type, strictly decoded from the
// backend's `settings` block and then validated (§2.4 two-phase decode).
type Config interface {
	// Validate reports the first invalid or missing setting.
	Validate() error
}

// Deps are the shared dependencies handed to a factory when it opens an
// adapter. Fields may be nil: Logger means discard, Embedder means none.
type Deps struct {
	Logger   *slog.Logger
	Embedder Embedder
	// TenantIndex, when set, keeps each tenant in an index of its own
	// (tenancy mode "index"); only factories with TenantIndices accept it.
	TenantIndex *TenantIndex
}

// Factory describes one engine: its name (the `engine` key in the
// configuration), a constructor for its zero-valued Config with defaults
// applied, and Open, which refuses an invalid Config (Validating) and
// turns a valid one into an Adapter.
type Factory struct {
	Name      string
	NewConfig func() Config
	Open      OpenFunc
	// TenantIndices reports that Open accepts Deps.TenantIndex: the
	// adapter can keep each tenant in an index of its own.
	TenantIndices bool
}

// OpenFunc is a factory's constructor for a validated Config.
type OpenFunc func(ctx context.Context, cfg Config, d Deps) (Adapter, error)

// Validating is the one place a factory's Open validates its Config:
// each engine's Factory.Open is its constructor wrapped by Validating, so
// a direct caller's invalid Config is refused before open runs, and open
// itself does not validate again. The configuration loader validates
// settings at load time (a configuration is checked without opening it).
func Validating(open OpenFunc) OpenFunc {
	return func(ctx context.Context, cfg Config, d Deps) (Adapter, error) {
		if cfg == nil {
			return nil, fmt.Errorf("adapters: nil config")
		}
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		return open(ctx, cfg, d)
	}
}

// Registry is an explicit, immutable table of engine factories. There are
// no init side effects and no global registry.
type Registry struct {
	byName map[string]Factory
}

// NewRegistry builds a registry from fs. It panics on an empty name, a
// missing constructor or a duplicate name: each is a programming error in
// the binary's factory table, not a runtime condition.
func NewRegistry(fs ...Factory) *Registry {
	r := &Registry{byName: make(map[string]Factory, len(fs))}
	for _, f := range fs {
		r.add(f)
	}
	return r
}

func (r *Registry) add(f Factory) {
	if f.Name == "" || f.NewConfig == nil || f.Open == nil {
		panic(fmt.Sprintf("adapters: incomplete factory %q", f.Name))
	}
	if _, dup := r.byName[f.Name]; dup {
		panic(fmt.Sprintf("adapters: duplicate factory %q", f.Name))
	}
	r.byName[f.Name] = f
}

// Lookup returns the factory registered under name.
func (r *Registry) Lookup(name string) (Factory, bool) {
	f, ok := r.byName[name]
	return f, ok
}

// Names lists the registered engine names in sorted order.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Secret is a credential in a configuration. It prints, and marshals to
// JSON and YAML, as "<secret>" so a loaded configuration can be shown
// without leaking it; Reveal returns the value for a client library.
type Secret string

const elided = "<secret>"

// String implements fmt.Stringer; an empty secret prints empty.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return elided
}

// GoString implements fmt.GoStringer (%#v).
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// MarshalJSON elides the value.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// MarshalYAML elides the value.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// MarshalText elides the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Reveal returns the plain value.
func (s Secret) Reveal() string { return string(s) }
