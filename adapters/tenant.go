package adapters

import "context"

// Tenant identifies the tenant of a call that the access layer scoped to
// one (an API key with a tenant filter or a tenant value).
type Tenant struct {
	// Name is the key's tenant value; with index isolation it selects the
	// tenant's own index. Empty for a key scoped by its filter only.
	Name string
	// Forced are the meta paths the access layer set itself (the key
	// filter's eq fields); they are exempt from Tenancy.MetaFields.
	Forced []string
}

type tenantKey struct{}

// WithTenant marks ctx as a call made by tenant t.
func WithTenant(ctx context.Context, t Tenant) context.Context {
	return context.WithValue(ctx, tenantKey{}, &t)
}

// TenantFrom returns the tenant of a call, if the access layer scoped it.
// Adapters that isolate tenants by index read it in Upsert and Delete.
func TenantFrom(ctx context.Context) (Tenant, bool) {
	t, ok := ctx.Value(tenantKey{}).(*Tenant)
	if !ok {
		return Tenant{}, false
	}
	return *t, true
}
