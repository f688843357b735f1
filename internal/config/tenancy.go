package config

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// Tenancy modes (backends[].tenancy.mode).
const (
	// TenancyShared keeps every tenant in the backend's one index, told
	// apart by each key's filter.
	TenancyShared = "shared"
	// TenancyIndex keeps each tenant's documents in an index of its own,
	// named from tenancy.index and the key's tenant.
	TenancyIndex = "index"
)

// Tenancy is a backend's multi-tenancy settings: how the documents of the
// tenants (API keys with a filter or a tenant, see AccessKey) are kept
// apart, and what a tenant may write.
type Tenancy struct {
	// Mode is "shared" (default) or "index".
	Mode string `mapstructure:"mode" json:"mode"`
	// Index is the name template of a tenant's own index in mode index,
	// e.g. "docs-{tenant}"; the tenant is escaped to the index-name
	// alphabet (adapters.EscapeTenant).
	Index string `mapstructure:"index" json:"index,omitempty"`
	// MappingFile is a JSON file holding the create-index body
	// ({"settings":…,"mappings":…}) every tenant index is created from in
	// mode index, on the tenant's first write. Capabilities are derived
	// from it. Relative paths are relative to the working directory.
	MappingFile string `mapstructure:"mapping_file" json:"mapping_file,omitempty"`
	// MetaFields lists the meta paths a tenant's index/add may write; a
	// path admits the paths below it. Empty admits any.
	MetaFields []string `mapstructure:"meta_fields" json:"meta_fields,omitempty"`
	// MaxNewFields bounds the meta paths one tenant index/add may write
	// that the index does not map yet. Absent: 0 with meta_fields (map the
	// allowed fields up front), else 32 in mode shared and no bound (-1)
	// in mode index, where each tenant's index is its own field budget;
	// negative: no bound.
	MaxNewFields *int `mapstructure:"max_new_fields" json:"max_new_fields"`
}

// applyTenancyDefaults resolves the mode and the new-field budget, so
// `config check` prints what is in force.
func applyTenancyDefaults(t *Tenancy) {
	if t.Mode == "" {
		t.Mode = TenancyShared
	}
	if t.MaxNewFields == nil {
		n := t.Engine().DefaultNewFieldCap()
		t.MaxNewFields = &n
	}
}

// Isolated reports whether the backend keeps each tenant in an index of
// its own.
func (t *Tenancy) Isolated() bool { return t.Mode == TenancyIndex }

// Engine returns the Engine's view of the settings.
func (t *Tenancy) Engine() retrieval.Tenancy {
	return retrieval.Tenancy{Index: t.Isolated(), MetaFields: slices.Clone(t.MetaFields), MaxNewFields: t.MaxNewFields}
}

// TenantIndex reads the mapping file and returns the adapter's view of
// mode index, nil in mode shared.
func (t *Tenancy) TenantIndex() (*adapters.TenantIndex, error) {
	if !t.Isolated() {
		return nil, nil
	}
	body, err := os.ReadFile(t.MappingFile)
	if err != nil {
		return nil, fmt.Errorf("mapping_file: %w", err)
	}
	if err := adapters.ValidateTenantMapping(body); err != nil {
		return nil, fmt.Errorf("mapping_file %s: %w", t.MappingFile, err)
	}
	return &adapters.TenantIndex{Template: t.Index, Mapping: json.RawMessage(body)}, nil
}

// validate checks the block at path for an engine from factory f.
func (t *Tenancy) validate(path string, f adapters.Factory) error {
	for i, p := range t.MetaFields {
		if p == "" || slices.Contains(strings.Split(p, "."), "") {
			return fmt.Errorf("%s.meta_fields[%d]: %q is not a meta path", path, i, p)
		}
	}
	switch t.Mode {
	case TenancyShared:
		if t.Index != "" || t.MappingFile != "" {
			return fmt.Errorf("%s: index and mapping_file apply to mode index only", path)
		}
		return nil
	case TenancyIndex:
	default:
		return fmt.Errorf("%s.mode: %q is not shared or index", path, t.Mode)
	}
	if !f.TenantIndices {
		return fmt.Errorf("%s.mode: engine %s cannot keep each tenant in an index of its own; use mode shared", path, f.Name)
	}
	if t.Index == "" || t.MappingFile == "" {
		return fmt.Errorf("%s: mode index needs index (a name template with %s) and mapping_file", path, adapters.TenantPlaceholder)
	}
	if err := adapters.ValidateTenantTemplate(t.Index); err != nil {
		return fmt.Errorf("%s.index: %w", path, err)
	}
	if _, err := t.TenantIndex(); err != nil {
		return fmt.Errorf("%s.%w", path, err)
	}
	return nil
}

// validateTenants checks each key's tenant scope against the tenancy
// mode of every backend it may address: on a shared backend a tenant is
// told apart by its filter alone (a tenant value scopes nothing there),
// on an index-isolated one by its tenant value, which must give a valid
// index name.
func validateTenants(keys []AccessKey, backends []Backend) error {
	for i := range keys {
		k := &keys[i]
		path := fmt.Sprintf("access.keys[%d]", i)
		for j := range backends {
			b := &backends[j]
			if len(k.Engines) > 0 && !slices.Contains(k.Engines, b.Name) {
				continue
			}
			if err := k.validateTenant(path, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (k *AccessKey) validateTenant(path string, b *Backend) error {
	scoped := len(k.Filter) > 0 || k.Tenant != ""
	switch {
	case !scoped:
		return nil
	case !b.Tenancy.Isolated() && len(k.Filter) == 0:
		return fmt.Errorf("%s.tenant: backend %s keeps tenants in one shared index, where only a filter scopes a key; add a filter or restrict engines", path, b.Name)
	case !b.Tenancy.Isolated() && k.Write && k.IDPrefix == "":
		return fmt.Errorf("%s.id_prefix: required for a writable key with a filter on backend %s (tenants share its id space)", path, b.Name)
	case b.Tenancy.Isolated() && k.Tenant == "":
		return fmt.Errorf("%s.tenant: backend %s keeps each tenant in an index of its own; a key with a filter needs a tenant", path, b.Name)
	case b.Tenancy.Isolated():
		if _, err := adapters.TenantIndexName(b.Tenancy.Index, k.Tenant); err != nil {
			return fmt.Errorf("%s.tenant: %w", path, err)
		}
	}
	return nil
}
