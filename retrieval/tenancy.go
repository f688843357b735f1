package retrieval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// DefaultMaxNewFields is how many meta paths the target's mapping does not
// hold yet one tenant index/add may write when no allow-list is set.
const DefaultMaxNewFields = 32

// Tenancy is a backend's multi-tenancy policy. Its write checks apply to
// calls carrying a Tenant (WithTenant); other callers (stdio, a key with
// no tenant scope) are trusted with the whole backend.
type Tenancy struct {
	// Index isolates tenants by index: a tenant's documents live in an
	// index of its own (the adapter names and creates it, see
	// TenantIndex), so no index statistics or mapping are shared. Writes
	// then need a tenant; retrieve without one reads the configured target.
	Index bool
	// MetaFields, when set, are the only meta paths a tenant's index/add
	// may write; a path admits every path below it ("author" admits
	// "author.name"). Anything else is -32602 naming the field.
	MetaFields []string
	// MaxNewFields bounds the meta paths one tenant index/add may write
	// that the target's mapping does not hold yet (the probe's
	// MappedFields plus what earlier writes added): in a shared index every
	// tenant shares the field budget, and the first writer of a field fixes
	// its type for all. Nil means 0 when MetaFields is set (map allowed
	// fields up front), else DefaultMaxNewFields in a shared index and no
	// bound under index isolation (a tenant's own index is its own
	// budget); negative means no bound. It applies only to engines that
	// keep a mapping.
	MaxNewFields *int
}

// newFieldCap resolves MaxNewFields; -1 means no bound.
func (t Tenancy) newFieldCap() int {
	switch {
	case t.MaxNewFields != nil && *t.MaxNewFields < 0:
		return -1
	case t.MaxNewFields != nil:
		return *t.MaxNewFields
	case len(t.MetaFields) > 0:
		return 0
	case t.Index:
		return -1
	}
	return DefaultMaxNewFields
}

// DefaultNewFieldCap is the MaxNewFields a nil value stands for in t
// (-1: no bound).
func (t Tenancy) DefaultNewFieldCap() int {
	t.MaxNewFields = nil
	return t.newFieldCap()
}

// knownFields is the Engine's view of the target's mapping: the probe's
// leaf fields plus the leaf paths later writes added, per tenant index
// under index isolation ("" is the shared target).
type knownFields struct {
	probed  map[string]bool // nil: the engine keeps no mapping
	mu      sync.RWMutex
	learned map[string]map[string]bool
}

func newKnownFields(mapped []string) *knownFields {
	k := &knownFields{learned: map[string]map[string]bool{}}
	if mapped != nil {
		k.probed = make(map[string]bool, len(mapped))
		for _, f := range mapped {
			k.probed[f] = true
		}
	}
	return k
}

// known reports whether path, or a leaf field it lies below (a geo_point
// written as {"lat","lon"}), is mapped for tenant.
func (k *knownFields) known(tenant, path string) bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	learned := k.learned[tenant]
	for p := path; ; {
		if k.probed[p] || learned[p] {
			return true
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// learn records the leaf paths a successful write added.
func (k *knownFields) learn(tenant string, docs []adapters.Document) {
	if k.probed == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	set := k.learned[tenant]
	if set == nil {
		set = map[string]bool{}
		k.learned[tenant] = set
	}
	for _, d := range docs {
		for _, p := range filterlang.MetaLeaves(d.Meta) {
			if !k.probed[p] {
				set[p] = true
			}
		}
	}
}

// canonicalMeta puts every document's meta in its one canonical spelling
// and refuses meta keys on the paths index/add writes itself (§7.10).
func (e *Engine) canonicalMeta(docs []adapters.Document) *rcp.Error {
	reserved := e.reservedFields()
	for i := range docs {
		at := fmt.Sprintf("documents[%d].meta", i)
		m, err := filterlang.CanonicalMeta(docs[i].Meta, at)
		if err != nil {
			return err
		}
		for _, r := range reserved {
			if where, _, found := filterlang.MetaAt(m, r); found {
				return rcp.InvalidParams(at+"."+where, "meta may not set %s: the sidecar writes %s from the document itself", where, r)
			}
		}
		docs[i].Meta = m
	}
	return nil
}

// reservedFields are the adapter's reserved paths plus the vector field
// when the sidecar embeds documents into it.
func (e *Engine) reservedFields() []string {
	out := e.ev.ReservedFields
	if e.embedsDocuments() && e.dense != nil {
		out = append(slices.Clone(out), e.dense.Name)
	}
	return out
}

// checkTenantMeta applies the tenancy write policy to a tenant's
// documents: the meta allow-list, then the new-field budget of the index
// they go to (index is the tenant's own under index isolation, else "").
func (e *Engine) checkTenantMeta(t adapters.Tenant, index string, docs []adapters.Document) *rcp.Error {
	pol := e.opts.Tenancy
	budget := pol.newFieldCap()
	if e.known.probed == nil {
		budget = -1 // no mapping, no shared field budget
	}
	seen := map[string]bool{}
	for i, d := range docs {
		for _, path := range filterlang.MetaLeaves(d.Meta) {
			field := fmt.Sprintf("documents[%d].meta.%s", i, path)
			if slices.Contains(t.Forced, path) {
				continue
			}
			if len(pol.MetaFields) > 0 && !underAny(path, pol.MetaFields) {
				return rcp.InvalidParams(field, "meta field %s is not writable on this backend (tenancy.meta_fields)", path)
			}
			if budget < 0 || seen[path] || e.known.known(index, path) {
				continue
			}
			seen[path] = true
			if len(seen) > budget {
				return rcp.InvalidParams(field, "meta field %s is not mapped yet and this write would add more than %d new field(s) (tenancy.max_new_fields): tenants share the index's field budget", path, budget)
			}
		}
	}
	return nil
}

// underAny reports whether path is one of paths or lies below one.
func underAny(path string, paths []string) bool {
	for _, p := range paths {
		if path == p || strings.HasPrefix(path, p+".") {
			return true
		}
	}
	return false
}

// tenantOf returns the tenant whose index a call is served from under
// index isolation ("" for the configured target), or -32012 for a tenant
// scope without a tenant name, which index isolation cannot serve.
func (e *Engine) tenantOf(ctx context.Context, write bool) (string, *rcp.Error) {
	t, scoped := adapters.TenantFrom(ctx)
	switch {
	case !e.opts.Tenancy.Index:
		return "", nil
	case scoped && t.Name != "":
		return t.Name, nil
	case scoped:
		return "", rcp.NewError(rcp.CodeUnauthorized, "this key has no tenant, and this backend keeps each tenant in an index of its own")
	case write:
		return "", rcp.NewError(rcp.CodeUnauthorized, "writes on this backend need a key with a tenant: each tenant has an index of its own")
	}
	return "", nil
}
