package capability

import "github.com/rcp-sidecar/rcp-sidecar/filterlang"

// Defaults applied by Policy.WithDefaults.
const (
	DefaultMaxK            = 200
	DefaultCandidateK      = 100
	DefaultEmbedBatchLimit = 128
	DefaultTrust           = "untrusted"
	// DefaultMaxQueryChars bounds a retrieve query (§15.5): far above any
	// search query, and well below what keeps an embedder busy for tens of
	// seconds (measured: a 100 000-character dense query took 29 s, and
	// the embedding server 65 s more).
	DefaultMaxQueryChars = 8192
)

// Policy is the operator's narrowing of what the evidence allows. A policy
// can only remove capabilities, never add one the evidence does not prove.
type Policy struct {
	// MaxK is retrieve.maxK (default 200); DefaultCandidateK is the recall
	// size used when a request sets none (default 100).
	MaxK, DefaultCandidateK int
	// MaxQueryChars is the longest retrieve query accepted, in Unicode
	// code points (characters, not bytes) of each text block and of all
	// blocks joined by single spaces; longer is -32602 on "query" (or
	// "query[i]") before any engine or embedder call (§15.5). Default 8192.
	MaxQueryChars int
	// Writable opts in to index/add and index/delete.
	Writable bool
	// Fields, when non-empty, is the allow-list of filterable fields.
	Fields []string
	// Operators, when non-empty, is the allow-list of filter operators.
	Operators []filterlang.Op
	// EmbedDim is the dimension of the configured embedder (0: none).
	EmbedDim int
	// EmbedElement is the element type of the embedder's vectors ("" means
	// ElementFloat).
	EmbedElement Element
	// EmbedIdentity names the embedding model (embed.identity, §15.7).
	EmbedIdentity string
	// EmbedBatchLimit is embed.batchLimit (default 128 when embedding).
	EmbedBatchLimit int
	// Trust is Hit.trust.level for this corpus (default "untrusted", §15.2).
	Trust string
	// Streaming and Log advertise the streaming and log capabilities.
	Streaming, Log bool
	// Reranker is what a start-up check proved of the configured reranker
	// (nil: none configured, or the check failed).
	Reranker *RerankerFacts
	// Session is the sidecar's session store (nil: sessionId is ignored).
	Session *SessionFacts
	// Feedback reports that feedback signals have a sink (logs, metrics
	// and optionally an index).
	Feedback bool
}

// RerankerFacts describe a reranker a start-up check proved working.
type RerankerFacts struct {
	// Method is the rerank method it implements ("cross-encoder").
	Method string
	// Models are the model names it serves; MaxCandidates the most
	// passages one call may score.
	Models        []string
	MaxCandidates int
	// Proof says what the start-up check did (for probe's explanation).
	Proof string
	// Via names an engine's own reranker (Evidence.NativeReranker) by the
	// path that reaches it, e.g. "Elasticsearch inference endpoint
	// my-rerank" or "OpenSearch ml-commons model <id>", for probe and
	// usage.notes; empty for the sidecar's reranker.
	Via string
	// Failed, when set, says why the start-up check failed: nothing is
	// advertised, and probe explains why.
	Failed string
}

// SessionFacts describe the session store behind sessionId (§7.7.3).
type SessionFacts struct {
	Dedup      bool
	TTLSeconds int
	// MaxSessions and MaxIDs are its bounds, for probe's explanation.
	MaxSessions, MaxIDs int
}

// WithDefaults returns p with zero limits replaced by their defaults.
func (p Policy) WithDefaults() Policy {
	if p.MaxK <= 0 {
		p.MaxK = DefaultMaxK
	}
	if p.DefaultCandidateK <= 0 {
		p.DefaultCandidateK = DefaultCandidateK
	}
	if p.MaxQueryChars <= 0 {
		p.MaxQueryChars = DefaultMaxQueryChars
	}
	if p.EmbedDim > 0 && p.EmbedBatchLimit <= 0 {
		p.EmbedBatchLimit = DefaultEmbedBatchLimit
	}
	if p.Trust == "" {
		p.Trust = DefaultTrust
	}
	return p
}

// allowsField reports whether the policy's field allow-list admits name.
func (p Policy) allowsField(name string) bool {
	if len(p.Fields) == 0 {
		return true
	}
	for _, f := range p.Fields {
		if f == name {
			return true
		}
	}
	return false
}

// allowsOp reports whether the policy's operator allow-list admits op.
func (p Policy) allowsOp(op filterlang.Op) bool {
	if len(p.Operators) == 0 {
		return true
	}
	for _, o := range p.Operators {
		if o == op {
			return true
		}
	}
	return false
}
