package server

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/internal/jsonscan"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
)

// requestMeta is what the server reads from a request's params._meta.
type requestMeta struct {
	progressToken json.RawMessage // string or integer, echoed verbatim (§9)
	deadlineMs    float64
	logLevel      string
}

func parseMeta(params json.RawMessage) requestMeta {
	var rm requestMeta
	if !bytes.Contains(params, []byte(`"_meta"`)) && !bytes.Contains(params, []byte(`\u`)) {
		return rm // cannot name _meta, not even with escapes
	}
	meta := lastMembers(params, "_meta")
	m := lastMembers(meta[0], "progressToken", "deadlineMs", "logLevel")
	if t := m[0]; isStringOrInt(t) {
		rm.progressToken = t
	}
	_ = json.Unmarshal(m[1], &rm.deadlineMs)
	_ = json.Unmarshal(m[2], &rm.logLevel)
	return rm
}

// lastMembers returns the raw values of the named members of the object
// obj (the last one when repeated, as encoding/json keeps), all nil when
// obj is not a well-formed object.
func lastMembers(obj []byte, names ...string) [][]byte {
	out := make([][]byte, len(names))
	it := jsonscan.Object(obj)
	for rawKey, value, ok := it.Next(); ok; rawKey, value, ok = it.Next() {
		name, err := jsonscan.Name(rawKey)
		if err != nil {
			clear(out)
			return out
		}
		if i := slices.Index(names, name); i >= 0 {
			out[i] = value
		}
	}
	if it.Err() != nil {
		clear(out)
	}
	return out
}

func isStringOrInt(t []byte) bool {
	if len(t) == 0 {
		return false
	}
	if t[0] == '"' {
		return true
	}
	_, err := strconv.ParseInt(string(t), 10, 64)
	return err == nil
}

// logLevels ranks the §17.1 severities.
var logLevels = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4}

// reporter implements rcp.Reporter for one request. It sends nothing once
// the final response is about to be written, so every notification for a
// request precedes its response (§9).
type reporter struct {
	mu     sync.Mutex
	closed bool
	emit   func([]byte) // nil: the transport cannot carry notifications
	token  json.RawMessage
	logMin int // -1: logs disabled
}

// newReporter gates progress on _meta.progressToken plus advertised
// streaming (§9), and logs on advertised log plus the client's opt-in via
// its log capability or a _meta.logLevel (§7.1, §17.1).
func (sess *session) newReporter(m requestMeta, emit func([]byte)) *reporter {
	r := &reporter{emit: emit, logMin: -1}
	if sess.srv.caps.Streaming != nil {
		r.token = m.progressToken
	}
	sess.mu.Lock()
	clientLog, level := sess.clientLog, sess.logLevel
	sess.mu.Unlock()
	if m.logLevel != "" {
		clientLog, level = true, m.logLevel
	}
	if sess.srv.caps.Log != nil && clientLog {
		r.logMin = logLevels["info"]
		if n, ok := logLevels[level]; ok {
			r.logMin = n
		}
	}
	return r
}

type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Stage         string          `json:"stage,omitempty"`
	Message       string          `json:"message,omitempty"`
	Partial       json.RawMessage `json:"partial,omitempty"`
}

// ProgressEnabled reports whether Progress would send anything, so a
// backend can skip building partial hits nobody will receive (§9).
func (r *reporter) ProgressEnabled() bool { return r.token != nil }

// LogEnabled reports whether Log at level would send anything (§17.1).
func (r *reporter) LogEnabled(level string) bool {
	n, ok := logLevels[level]
	if !ok {
		n = logLevels["info"]
	}
	return r.logMin >= 0 && n >= r.logMin
}

// Progress emits notifications/progress (§9).
func (r *reporter) Progress(stage string, progress float64, message string, partial []rcp.Hit) {
	if r.token == nil {
		return
	}
	if math.IsNaN(progress) || progress < 0 {
		progress = 0
	}
	p := progressParams{ProgressToken: r.token, Progress: min(progress, 1), Stage: stage, Message: message}
	if len(partial) > 0 {
		if b, err := jsonrpc.Marshal(map[string][]rcp.Hit{"hits": partial}); err == nil {
			p.Partial = b
		}
	}
	r.send(rcp.NotifyProgress, p)
}

type logParams struct {
	Level   string          `json:"level"`
	Message string          `json:"message"`
	Logger  string          `json:"logger,omitempty"`
	Data    map[string]any  `json:"data,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// Log emits notifications/log at or above the client's level (§17.1).
func (r *reporter) Log(level, logger, message string, data map[string]any) {
	n, ok := logLevels[level]
	if !ok {
		level, n = "info", logLevels["info"]
	}
	if r.logMin < 0 || n < r.logMin {
		return
	}
	p := logParams{Level: level, Message: message, Logger: logger, Data: data}
	if r.token != nil {
		p.Meta, _ = json.Marshal(map[string]json.RawMessage{"progressToken": r.token})
	}
	r.send(rcp.NotifyLog, p)
}

func (r *reporter) send(method string, params any) {
	raw, err := jsonrpc.Marshal(params)
	if err != nil {
		return // unencodable diagnostics are dropped, never sent malformed
	}
	b, err := jsonrpc.EncodeRequest(&jsonrpc.Request{Method: method, Params: raw})
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed && r.emit != nil {
		r.emit(b)
	}
}

func (r *reporter) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}
