package config

import (
	"errors"
	"fmt"
	"strings"
)

// MCP configures the Model Context Protocol server (server.mcp): the
// `mcp` command over stdio, and Streamable HTTP mounted by `serve`.
type MCP struct {
	// Disabled keeps serve from mounting MCP over HTTP.
	Disabled bool `mapstructure:"disabled" json:"disabled,omitempty"`
	// Path is where serve mounts it (default /mcp).
	Path string `mapstructure:"path" json:"path"`
	// TokenBudget is the tokenBudget a search tool applies when the
	// caller gives none, on engines that pack to a budget (0: none).
	TokenBudget int `mapstructure:"token_budget" json:"token_budget"`
	// MaxSchemaFields bounds the filter fields a search tool's input
	// schema enumerates; the rest stay usable and are listed by the probe
	// resource. policy.fields chooses which fields are advertised at all.
	MaxSchemaFields int `mapstructure:"max_schema_fields" json:"max_schema_fields"`
	// MaxWriteBatch bounds documents per index_add and ids per
	// index_delete call.
	MaxWriteBatch int `mapstructure:"max_write_batch" json:"max_write_batch"`
}

// DefaultMCP returns the defaults of server.mcp.
func DefaultMCP() MCP {
	return MCP{Path: "/mcp", TokenBudget: 4000, MaxSchemaFields: 48, MaxWriteBatch: 100}
}

func (m *MCP) validate(basePath string) error {
	switch {
	case m.Disabled:
		return nil
	case !strings.HasPrefix(m.Path, "/") || len(m.Path) > 1 && strings.HasSuffix(m.Path, "/") || m.Path == "/":
		return fmt.Errorf("server.mcp.path: %q must start with / and not end with /", m.Path)
	case m.Path == basePath || strings.HasPrefix(m.Path, basePath+"/") || strings.HasPrefix(basePath, m.Path+"/"):
		return fmt.Errorf("server.mcp.path: %q overlaps server.http.base_path %q", m.Path, basePath)
	case m.Path == "/healthz" || m.Path == "/readyz" || strings.HasPrefix(m.Path, "/engines/") || m.Path == "/engines":
		return fmt.Errorf("server.mcp.path: %q is taken", m.Path)
	case m.TokenBudget < 0:
		return errors.New("server.mcp.token_budget: must not be negative")
	case m.MaxSchemaFields < 1:
		return errors.New("server.mcp.max_schema_fields: must be at least 1")
	case m.MaxWriteBatch < 1:
		return errors.New("server.mcp.max_write_batch: must be at least 1")
	}
	return nil
}
