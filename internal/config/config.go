// Package config loads the sidecar's YAML configuration: top-level structs
// decoded strictly (an unknown key is an error naming its path), defaults,
// `${VAR}` expansion and `RCP_*` environment overrides (the only place the
// environment is read), and a second, per-backend phase that decodes
// `settings` into the engine's own adapters.Config.
package config

import (
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// Secret is a credential; it is adapters.Secret so that engine Config
// types can use it too. It prints and marshals as "<secret>".
type Secret = adapters.Secret

// Config is the whole configuration file.
type Config struct {
	Server   Server    `mapstructure:"server" json:"server"`
	Embedder *Embedder `mapstructure:"embedder" json:"embedder,omitempty"`
	Backends []Backend `mapstructure:"backends" json:"backends"`
	Access   Access    `mapstructure:"access" json:"access"`
	// Telemetry configures traces, metrics and log redaction (§17).
	Telemetry Telemetry `mapstructure:"telemetry" json:"telemetry"`
	// Reranker, Session and Feedback configure rerank, sessionId and
	// feedback for every backend (extras.go); absent means not served.
	Reranker *Reranker `mapstructure:"reranker" json:"reranker,omitempty"`
	Session  *Session  `mapstructure:"session" json:"session,omitempty"`
	Feedback *Feedback `mapstructure:"feedback" json:"feedback,omitempty"`
	// State names the store the replicas of a deployment share (state.go);
	// absent means each replica keeps its sessions and limits in memory.
	State *State `mapstructure:"state" json:"state,omitempty"`
}

// Server holds transport and dispatch settings.
type Server struct {
	HTTP     HTTP          `mapstructure:"http" json:"http"`
	Deadline time.Duration `mapstructure:"deadline" json:"deadline"`
	MaxBatch int           `mapstructure:"max_batch" json:"max_batch"`
	LogLevel string        `mapstructure:"log_level" json:"log_level"`
	// LogFormat is "text" (default) or "json".
	LogFormat string `mapstructure:"log_format" json:"log_format,omitempty"`
	// ShutdownGrace bounds the drain on SIGTERM/SIGINT (default 10s).
	ShutdownGrace time.Duration `mapstructure:"shutdown_grace" json:"shutdown_grace,omitempty"`
	// MCP configures the Model Context Protocol server.
	MCP MCP `mapstructure:"mcp" json:"mcp"`
	// CursorKeys seal pagination cursors and pinned indexVersion tokens:
	// the first seals, every one opens. Every replica of one service needs
	// the same keys; without any, each process seals with a random key of
	// its own (cursorkeys.go).
	CursorKeys []CursorKey `mapstructure:"cursor_keys" json:"cursor_keys,omitempty"`
}

// HTTP holds the HTTP transport settings (§5.2), including the limits
// that keep slow and idle clients from holding connections (§15.5).
type HTTP struct {
	Listen       string        `mapstructure:"listen" json:"listen"`
	BasePath     string        `mapstructure:"base_path" json:"base_path"`
	MaxBodyBytes int64         `mapstructure:"max_body_bytes" json:"max_body_bytes"`
	CORSOrigins  []string      `mapstructure:"cors_origins" json:"cors_origins"`
	Stateful     bool          `mapstructure:"stateful" json:"stateful"`
	SessionTTL   time.Duration `mapstructure:"session_ttl" json:"session_ttl"`
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration `mapstructure:"read_header_timeout" json:"read_header_timeout"`
	// BodyTimeout bounds reading a request's whole body, from the end of
	// its headers: a client trickling bytes is cut when it expires, not
	// when one read stalls.
	BodyTimeout time.Duration `mapstructure:"body_timeout" json:"body_timeout"`
	// WriteTimeout bounds each write of a response (the JSON body, each
	// SSE frame), so a client that stops reading is disconnected while a
	// stream may last as long as its request runs.
	WriteTimeout time.Duration `mapstructure:"write_timeout" json:"write_timeout"`
	// IdleTimeout closes a keep-alive connection that carries no request
	// for this long.
	IdleTimeout time.Duration `mapstructure:"idle_timeout" json:"idle_timeout"`
	// MaxConns caps open connections; more wait to be accepted. 0: no cap.
	MaxConns int `mapstructure:"max_conns" json:"max_conns"`
}

// Defaults of the HTTP connection limits (server.http).
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 10 * time.Second
	// DefaultIdleTimeout keeps a connection for a client that sends a
	// request every few seconds, so it pays no new TCP or TLS handshake,
	// and drops one left open and silent within a minute. It is shorter
	// than Go's client idle pool (90s), which retries a request the server
	// closed the connection under before sending anything.
	DefaultIdleTimeout = 60 * time.Second
	DefaultMaxConns    = 1024
)

// Embedder configures an OpenAI-compatible embedding endpoint. It is
// optional; without it only engines that embed queries themselves serve
// dense retrieval.
type Embedder struct {
	URL            string        `mapstructure:"url" json:"url"`
	Model          string        `mapstructure:"model" json:"model"`
	Dimension      int           `mapstructure:"dimension" json:"dimension"`
	APIKey         Secret        `mapstructure:"api_key" json:"api_key,omitempty"`
	BatchSize      int           `mapstructure:"batch_size" json:"batch_size"`
	Timeout        time.Duration `mapstructure:"timeout" json:"timeout"`
	QueryPrefix    string        `mapstructure:"query_prefix" json:"query_prefix,omitempty"`
	DocumentPrefix string        `mapstructure:"document_prefix" json:"document_prefix,omitempty"`
	// SendInputType sends "input_type": "query"|"document" with each
	// request, for servers that apply asymmetric prefixes themselves.
	SendInputType bool `mapstructure:"send_input_type" json:"send_input_type,omitempty"`
	// ElementType is the type of the embeddings asked for: "float" (the
	// default) or "int8", which asks the server for int8 embeddings and
	// refuses any value that is not an integer in [-128, 127]; int8
	// embeddings search Elasticsearch and OpenSearch byte vector fields.
	ElementType string `mapstructure:"element_type" json:"element_type,omitempty"`
	// EncodingFormat is how float embeddings are asked for: "base64" (the
	// default; OpenAI's little-endian float32 in base64, about a quarter
	// of the bytes and no decimal parsing) or "float" (arrays of
	// numbers). Either answer is read. A server that refuses base64
	// requests before answering one is asked for floats instead.
	EncodingFormat string `mapstructure:"encoding_format" json:"encoding_format,omitempty"`
}

// Backend is one engine target served by the sidecar.
type Backend struct {
	Name   string `mapstructure:"name" json:"name"`
	Engine string `mapstructure:"engine" json:"engine"`
	// Settings is the raw engine-specific block; Load decodes it into
	// Engine-owned Config.
	Settings map[string]any `mapstructure:"settings" json:"-"`
	Policy   Policy         `mapstructure:"policy" json:"policy"`
	// Weight scales this backend's contribution when several backends
	// are federated (§16.1); absent means 1.0.
	Weight *float64 `mapstructure:"weight" json:"weight,omitempty"`
	// Required makes a failure of this backend fail a federated query
	// instead of being skipped (§16.1).
	Required bool `mapstructure:"required" json:"required,omitempty"`
	// Resilience tunes timeouts, retries, the breaker and re-probing.
	Resilience Resilience `mapstructure:"resilience" json:"resilience"`
	// Tenancy keeps tenants' documents apart and bounds their writes.
	Tenancy Tenancy `mapstructure:"tenancy" json:"tenancy"`
	// Config is the decoded and validated engine configuration.
	Config adapters.Config `mapstructure:"-" json:"settings"`
}

// FusionWeight returns the backend's federation weight (default 1.0).
func (b *Backend) FusionWeight() float64 {
	if b.Weight == nil {
		return 1
	}
	return *b.Weight
}

// Policy narrows what a backend advertises, on top of what its probe
// proved. It never widens it.
type Policy struct {
	MaxK              int      `mapstructure:"max_k" json:"max_k"`
	DefaultCandidateK int      `mapstructure:"default_candidate_k" json:"default_candidate_k"`
	Writable          bool     `mapstructure:"writable" json:"writable"`
	Fields            []string `mapstructure:"fields" json:"fields,omitempty"`
	Operators         []string `mapstructure:"operators" json:"operators,omitempty"`
	Trust             string   `mapstructure:"trust" json:"trust,omitempty"`
	// MaxQueryChars caps a retrieve query, in characters (Unicode code
	// points) of each text block and of the blocks joined by spaces;
	// longer queries are -32602 before any engine or embedder call (§15.5).
	MaxQueryChars int `mapstructure:"max_query_chars" json:"max_query_chars"`
}

// Default returns the configuration used for absent keys.
func Default() *Config {
	return &Config{Server: Server{
		HTTP: HTTP{
			Listen:       "127.0.0.1:8080",
			BasePath:     "/rcp",
			MaxBodyBytes: 4 << 20,
			CORSOrigins:  []string{},
			SessionTTL:   30 * time.Minute,

			ReadHeaderTimeout: DefaultReadHeaderTimeout,
			BodyTimeout:       DefaultBodyTimeout,
			WriteTimeout:      DefaultWriteTimeout,
			IdleTimeout:       DefaultIdleTimeout,
			MaxConns:          DefaultMaxConns,
		},
		Deadline: 10 * time.Second,
		MaxBatch: 64,
		LogLevel: "info",
		MCP:      DefaultMCP(),
	}, Telemetry: DefaultTelemetry()}
}

// DefaultEmbedder returns the defaults applied under a present `embedder:` block.
func DefaultEmbedder() Embedder {
	return Embedder{BatchSize: 64, Timeout: 30 * time.Second}
}

// DefaultPolicy returns the defaults applied to each backend's policy.
func DefaultPolicy() Policy {
	return Policy{MaxK: 200, DefaultCandidateK: 100, MaxQueryChars: 8192}
}

// Backend returns the backend named name, or the only backend when name
// is empty and exactly one is configured.
func (c *Config) Backend(name string) (*Backend, bool) {
	if name == "" && len(c.Backends) == 1 {
		return &c.Backends[0], true
	}
	for i := range c.Backends {
		if c.Backends[i].Name == name {
			return &c.Backends[i], true
		}
	}
	return nil, false
}
