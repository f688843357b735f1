package mcpserver

import "net/http"

// ServersBuilt is how many MCP servers a Handler keeps.
func ServersBuilt(h http.Handler) int {
	hh := h.(*httpHandler)
	hh.mu.Lock()
	defer hh.mu.Unlock()
	return len(hh.servers)
}

// SetAfterBuild sets the hook ServeIO runs between building a session's
// server and starting its refresh, and returns a function restoring it.
func SetAfterBuild(f func()) (restore func()) {
	old := afterBuild
	afterBuild = f
	return func() { afterBuild = old }
}
