package adapters

import "context"

// HealthStatus is an engine's health of what a backend serves, on the
// scale every engine maps to.
type HealthStatus string

// The health scale. HealthUnknown is a check that failed or has not run.
const (
	HealthUnknown HealthStatus = ""
	HealthGreen   HealthStatus = "green"
	HealthYellow  HealthStatus = "yellow"
	HealthRed     HealthStatus = "red"
)

// Health is one health check's outcome.
type Health struct {
	// Status is the health on the common scale.
	Status HealthStatus `json:"status"`
	// State is the engine's own word for it (Qdrant's "grey" is
	// HealthYellow).
	State string `json:"state"`
	// Of names what was checked: "index" or "collection".
	Of string `json:"of"`
}

// HealthChecker may be implemented by adapters whose engine reports the
// health of the index, alias or collection the backend serves — that
// target only, never the whole cluster, so another tenant's trouble is not
// the backend's. A check answers within ctx's deadline and asks the
// engine for a shorter server-side timeout still.
type HealthChecker interface {
	Health(ctx context.Context) (Health, error)
}
