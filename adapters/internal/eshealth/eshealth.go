// Package eshealth is the health check the Elasticsearch and OpenSearch
// adapters share: the index-level _cluster/health of the backend's own
// index, alias or pattern — never the cluster-wide health, so one
// tenant's red index elsewhere in the cluster does not fail the backend.
package eshealth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// ServerTimeout is the engine-side bound of one check (master and wait
// timeouts): an index that does not exist makes the engine wait this long
// and answer 408 with status red.
const ServerTimeout = "1s"

// Path is the request path of target's health.
func Path(target string) string {
	return "/_cluster/health/" + url.PathEscape(target) + "?level=cluster&timeout=" + ServerTimeout + "&master_timeout=" + ServerTimeout
}

// Parse reads a health answer: 200, or 408 when the engine's wait timed
// out (its body still carries a status). Any other status, or a body
// without a known status, is an error.
func Parse(status int, body []byte) (adapters.Health, error) {
	if status != http.StatusOK && status != http.StatusRequestTimeout {
		return adapters.Health{}, fmt.Errorf("cluster health: HTTP %d", status)
	}
	var b struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return adapters.Health{}, fmt.Errorf("cluster health: %w", err)
	}
	h := adapters.Health{State: b.Status, Of: "index"}
	switch b.Status {
	case "green":
		h.Status = adapters.HealthGreen
	case "yellow":
		h.Status = adapters.HealthYellow
	case "red":
		h.Status = adapters.HealthRed
	default:
		return adapters.Health{}, fmt.Errorf("cluster health: unknown status %q", b.Status)
	}
	return h, nil
}
