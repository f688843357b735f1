package mcpserver

import "net/http"

// ServersBuilt is how many MCP servers a Handler keeps.
func ServersBuilt(h http.Handler) int {
	hh := h.(*httpHandler)
	hh.mu.Lock()
	defer hh.mu.Unlock()
	return len(hh.servers)
}
