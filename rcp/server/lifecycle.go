package server

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// session is the §13 lifecycle state of one connection (a stdio stream or a
// stateful HTTP session). A stateless HTTP request uses a throwaway session
// that counts as initialized at the advertised capabilities (§5.2).
type session struct {
	srv       *Server
	stateless bool
	token     string // stateful HTTP session token, issued by initialize

	mu          sync.Mutex
	initialized bool
	version     int
	clientLog   bool
	logLevel    string

	closing  atomic.Bool // shutdown accepted: read no further frames (§13.1)
	inflight inflight
}

func newSession(s *Server) *session { return &session{srv: s} }

func (sess *session) isInitialized() bool {
	if sess.stateless {
		return true
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.initialized
}

// initParams is decoded leniently except for protocolVersion: client
// capabilities and _meta are hints (§7.1) and never fail initialize.
type initParams struct {
	ProtocolVersion *int64          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	Meta            json.RawMessage `json:"_meta"`
}

// handleInitialize negotiates min(client, server) (§7.1). A missing or
// non-integer protocolVersion is -32602 field "protocolVersion"; a version
// below the RCP/1 floor is -32002 and leaves the session uninitialized
// (§13); a second initialize after a successful one is -32600.
func handleInitialize(_ context.Context, c *call) (any, error) {
	p, perr := rcp.DecodeParams[initParams](c.params)
	if perr != nil {
		return nil, perr
	}
	if p.ProtocolVersion == nil {
		return nil, rcp.InvalidParams("protocolVersion", "protocolVersion is required")
	}
	if *p.ProtocolVersion < 1 {
		return nil, rcp.NewError(rcp.CodeVersionMismatch, "no common protocol version: server speaks 1..%d", rcp.ProtocolVersion)
	}
	v := int(min(*p.ProtocolVersion, rcp.ProtocolVersion))
	sess := c.sess
	if sess.stateless {
		return sess.srv.infoResult(v, ""), nil
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.initialized {
		return nil, rcp.NewError(rcp.CodeInvalidRequest, "already initialized; re-negotiation is not allowed (§13)")
	}
	sess.initialized, sess.version = true, v
	sess.clientLog = hasKey(p.Capabilities, "log")
	sess.logLevel = stringMember(p.Meta, "logLevel")
	return sess.srv.infoResult(v, sess.token), nil
}

// handleInfo reports identity and the fixed capability set (§7.2, §13.2).
func handleInfo(_ context.Context, c *call) (any, error) {
	c.sess.mu.Lock()
	v := rcp.ProtocolVersion
	if c.sess.initialized {
		v = c.sess.version
	}
	c.sess.mu.Unlock()
	return c.sess.srv.infoResult(v, ""), nil
}

func (s *Server) infoResult(v int, token string) *rcp.InitializeResult {
	meta := map[string]any{"conformance": s.b.Conformance()} // §14
	if token != "" {
		meta["session"] = token // §5.2 stateful HTTP
	}
	return &rcp.InitializeResult{ProtocolVersion: v, Server: s.info, Capabilities: s.caps, Meta: meta}
}

// handlePing echoes nonce verbatim (§7.15).
func handlePing(_ context.Context, c *call) (any, error) {
	p, perr := rcp.DecodeParams[rcp.PingParams](c.params)
	if perr != nil {
		return nil, perr
	}
	if n := p.Nonce; len(n) > 0 && string(n) != "null" && n[0] != '"' && n[0] != '-' && (n[0] < '0' || n[0] > '9') {
		return nil, rcp.InvalidParams("nonce", "nonce must be a string or a number")
	}
	return p, nil
}

// handleShutdown answers {} (§7.12); the transport stops reading once the
// call was accepted.
func handleShutdown(_ context.Context, c *call) (any, error) {
	if c.sess.token != "" {
		c.sess.srv.dropSession(c.sess.token)
	}
	return struct{}{}, nil
}

func hasKey(obj json.RawMessage, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

func stringMember(obj json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	var s string
	if json.Unmarshal(obj, &m) == nil {
		_ = json.Unmarshal(m[key], &s)
	}
	return s
}
