// Package rcp is the RCP/1 wire vocabulary: method names, params and results,
// Hit, Content, capabilities (presence ⇒ supported, §6) and the error type
// (§12). It knows nothing of engines, transports or configuration.
package rcp

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ProtocolVersion is the highest RCP version this implementation speaks.
const ProtocolVersion = 1

// Method names (§7).
const (
	MethodInitialize   = "initialize"
	MethodInfo         = "info"
	MethodPing         = "ping"
	MethodShutdown     = "shutdown"
	MethodEmbed        = "embed"
	MethodEmbedSparse  = "embed/sparse"
	MethodEmbedMulti   = "embed/multi"
	MethodRerank       = "rerank"
	MethodRetrieve     = "retrieve"
	MethodTransform    = "query/transform"
	MethodGraph        = "graph"
	MethodIndexAdd     = "index/add"
	MethodIndexDelete  = "index/delete"
	MethodCatalogList  = "catalog/list"
	MethodFeedback     = "feedback"
	MethodMemoryBuild  = "memory/build"
	MethodMemoryRecall = "memory/recall"

	NotifyCancel   = "notifications/cancel"
	NotifyProgress = "notifications/progress"
	NotifyLog      = "notifications/log"
)

// Mode is a retrieval mode (§7.7).
type Mode string

// Retrieval modes.
const (
	ModeDense  Mode = "dense"
	ModeSparse Mode = "sparse"
	ModeHybrid Mode = "hybrid"
)

// FusionMethod is a fusion strategy for hybrid retrieval (§16.3).
type FusionMethod string

// Fusion methods.
const (
	FusionRRF      FusionMethod = "rrf"
	FusionWeighted FusionMethod = "weighted"
	FusionConvex   FusionMethod = "convex"
)

// ScoreScale labels the scale of Hit.score (§6.1).
type ScoreScale string

// Score scales.
const (
	ScaleCosine      ScoreScale = "cosine"
	ScaleDot         ScoreScale = "dot"
	ScaleBM25        ScoreScale = "bm25"
	ScaleProbability ScoreScale = "probability"
	ScaleUnbounded   ScoreScale = "unbounded"
)

// PeerInfo identifies a client or server.
type PeerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Capabilities is the presence ⇒ supported capability set (§6). A nil field
// is an absent capability.
type Capabilities struct {
	Embed      *EmbedCap     `json:"embed,omitempty"`
	Rerank     *RerankCap    `json:"rerank,omitempty"`
	Retrieve   *RetrieveCap  `json:"retrieve,omitempty"`
	Index      *IndexCap     `json:"index,omitempty"`
	Filter     *FilterCap    `json:"filter,omitempty"`
	Streaming  *struct{}     `json:"streaming,omitempty"`
	Pagination *struct{}     `json:"pagination,omitempty"`
	Citations  *struct{}     `json:"citations,omitempty"`
	Log        *LogCap       `json:"log,omitempty"`
	Catalog    *CatalogCap   `json:"catalog,omitempty"`
	Session    *SessionCap   `json:"session,omitempty"`
	Transform  *TransformCap `json:"transform,omitempty"`
	Graph      *GraphCap     `json:"graph,omitempty"`
	Sparse     *SparseEmbCap `json:"sparseEmbed,omitempty"`
	Multi      *MultiVecCap  `json:"multiVector,omitempty"`
	Feedback   *struct{}     `json:"feedback,omitempty"`
	Memory     *MemoryCap    `json:"memory,omitempty"`
}

// EmbedCap is the embed capability.
type EmbedCap struct {
	Dimension  int      `json:"dimension"`
	Identity   string   `json:"identity"`
	BatchLimit int      `json:"batchLimit,omitempty"`
	Normalized bool     `json:"normalized,omitempty"`
	Modalities []string `json:"modalities,omitempty"`
	Encodings  []string `json:"encodings,omitempty"`
}

// RerankCap is the rerank capability.
type RerankCap struct {
	Methods       []string `json:"methods"`
	MaxCandidates int      `json:"maxCandidates,omitempty"`
	Models        []string `json:"models,omitempty"`
}

// RetrieveCap is the retrieve capability metadata (§6.1).
type RetrieveCap struct {
	MaxK          int            `json:"maxK,omitempty"`
	Modes         []Mode         `json:"modes,omitempty"`
	Fusion        []FusionMethod `json:"fusion,omitempty"`
	MMR           bool           `json:"mmr,omitempty"`
	RerankBuiltin bool           `json:"rerankBuiltin,omitempty"`
	Deterministic bool           `json:"deterministic,omitempty"`
	Snapshots     bool           `json:"snapshots,omitempty"`
	Units         []string       `json:"units,omitempty"`
	TokenBudget   bool           `json:"tokenBudget,omitempty"`
	Confidence    bool           `json:"confidence,omitempty"`
	ScoreScale    ScoreScale     `json:"scoreScale,omitempty"`
	ScoreFloor    *float64       `json:"scoreFloor,omitempty"`
	DefaultMode   Mode           `json:"defaultMode,omitempty"`
}

// IndexCap is the index capability.
type IndexCap struct {
	Writable bool `json:"writable"`
}

// FilterCap advertises filterable fields (name → §8 type) and operators.
type FilterCap struct {
	Fields    map[string]string `json:"fields"`
	Operators []string          `json:"operators,omitempty"`
	// FieldOperators lists, for a field that serves fewer of Operators
	// than its type allows, the operators it does serve (a vendor
	// extension key, §6.2). A field not listed serves every advertised
	// operator its type allows.
	FieldOperators map[string][]string `json:"x-sidecar-fieldOperators,omitempty"`
	// FieldPrecision declares, for each float field, the precision the
	// engine stores its values at (a vendor extension key, §6.2). A
	// filter value and a document value are compared once both are
	// rounded to it, so on a field that rounds (Rounds) two values that
	// round alike are equal.
	FieldPrecision map[string]FieldPrecision `json:"x-sidecar-fieldPrecision,omitempty"`
}

// Stored precisions of float fields (FieldPrecision.Stored).
const (
	// PrecisionDouble stores the IEEE 754 double the value reads as.
	PrecisionDouble = "double"
	// PrecisionFloat stores the nearest IEEE 754 single (float32).
	PrecisionFloat = "float"
	// PrecisionHalfFloat stores the nearest IEEE 754 half (binary16) of
	// the nearest float32.
	PrecisionHalfFloat = "half_float"
	// PrecisionScaledFloat stores the integer round(x·ScalingFactor).
	PrecisionScaledFloat = "scaled_float"
)

// FieldPrecision is how a float field stores its values. -0.0 and 0 are
// one value at every precision.
type FieldPrecision struct {
	// Stored is one of the Precision* constants.
	Stored string `json:"stored"`
	// ScalingFactor is the factor of a scaled_float field.
	ScalingFactor float64 `json:"scalingFactor,omitempty"`
}

// Rounds reports whether the field stores a value other than the double a
// filter value reads as, so that distinct values can compare equal.
func (p FieldPrecision) Rounds() bool { return p.Stored != "" && p.Stored != PrecisionDouble }

// String names the precision: "half_float", "scaled_float(scaling_factor=100)".
func (p FieldPrecision) String() string {
	if p.Stored == PrecisionScaledFloat {
		return fmt.Sprintf("%s(scaling_factor=%g)", p.Stored, p.ScalingFactor)
	}
	return p.Stored
}

// OpsOf returns the operators advertised for field: its FieldOperators
// entry when it has one, else Operators. The §8 type table still applies.
func (f *FilterCap) OpsOf(field string) []string {
	if ops, ok := f.FieldOperators[field]; ok {
		return ops
	}
	return f.Operators
}

// LogCap is the log capability (§17.1).
type LogCap struct {
	Levels []string `json:"levels,omitempty"`
}

// CatalogCap is the catalog capability (§7.13).
type CatalogCap struct {
	Engines int `json:"engines"`
}

// SessionCap is the session capability (§7.7.3).
type SessionCap struct {
	Dedup      bool `json:"dedup,omitempty"`
	TTLSeconds int  `json:"ttlSeconds,omitempty"`
}

// TransformCap is the transform capability.
type TransformCap struct {
	Methods []string `json:"methods"`
}

// GraphCap is the graph capability.
type GraphCap struct {
	Ops []string `json:"ops"`
}

// SparseEmbCap is the sparseEmbed capability.
type SparseEmbCap struct {
	Identity string `json:"identity"`
}

// MultiVecCap is the multiVector capability.
type MultiVecCap struct {
	Dimension int    `json:"dimension"`
	Identity  string `json:"identity"`
}

// MemoryCap is the memory capability.
type MemoryCap struct {
	Scopes []string `json:"scopes"`
}

// InitializeParams are the params of initialize (§7.1).
type InitializeParams struct {
	ProtocolVersion int             `json:"protocolVersion"`
	Client          *PeerInfo       `json:"client,omitempty"`
	Capabilities    json.RawMessage `json:"capabilities,omitempty"`
	Meta            map[string]any  `json:"_meta,omitempty"`
}

// InitializeResult is the result of initialize and info (§7.1, §7.2).
type InitializeResult struct {
	ProtocolVersion int            `json:"protocolVersion"`
	Server          PeerInfo       `json:"server"`
	Capabilities    Capabilities   `json:"capabilities"`
	Meta            map[string]any `json:"_meta,omitempty"`
}

// Content is a tagged content block (§4.8).
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Data     string `json:"data,omitempty"`
	URI      string `json:"uri,omitempty"`
}

// QueryInput is a query: a bare string, one Content block, or an array of
// blocks (§4.8). A bare string is exactly a single text block.
type QueryInput struct {
	Blocks []Content
	set    bool
}

// TextQuery returns a QueryInput holding one text block.
func TextQuery(s string) QueryInput {
	return QueryInput{Blocks: []Content{{Type: "text", Text: s}}, set: true}
}

// IsSet reports whether the query was present (and not null).
func (q QueryInput) IsSet() bool { return q.set }

// UnmarshalJSON accepts a string, a Content object or an array of Content.
func (q *QueryInput) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*q = QueryInput{}
		return nil
	}
	switch {
	case len(b) > 1 && b[0] == '"' && b[len(b)-1] == '"' && isVerbatim(b[1:len(b)-1]):
		*q = TextQuery(string(b[1 : len(b)-1])) // hot path: the text is the bytes
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*q = TextQuery(s)
	case len(b) > 0 && b[0] == '{':
		var c Content
		if err := json.Unmarshal(b, &c); err != nil {
			return err
		}
		*q = QueryInput{Blocks: []Content{c}, set: true}
	case len(b) > 0 && b[0] == '[':
		var cs []Content
		if err := json.Unmarshal(b, &cs); err != nil {
			return err
		}
		*q = QueryInput{Blocks: cs, set: true}
	default:
		return &json.UnmarshalTypeError{Value: "query", Type: nil}
	}
	return nil
}

// MarshalJSON writes a single text block as a bare string.
func (q QueryInput) MarshalJSON() ([]byte, error) {
	if len(q.Blocks) == 1 && q.Blocks[0].Type == "text" {
		return json.Marshal(q.Blocks[0].Text)
	}
	return json.Marshal(q.Blocks)
}

// Text concatenates the text blocks of q. ok is false if q holds any
// non-text block.
func (q QueryInput) Text() (text string, ok bool) {
	var buf bytes.Buffer
	for i, c := range q.Blocks {
		if c.Type != "text" {
			return "", false
		}
		if i > 0 {
			buf.WriteByte(' ')
		}
		buf.WriteString(c.Text)
	}
	return buf.String(), true
}

// FusionParams are retrieve.fusion (§7.7).
type FusionParams struct {
	Method  FusionMethod       `json:"method,omitempty"`
	Weights map[string]float64 `json:"weights,omitempty"`
	RRFK    *int               `json:"rrfK,omitempty"`
	Alpha   *float64           `json:"alpha,omitempty"`
}

// RerankParams are retrieve.rerank when it is an object (§7.7).
type RerankParams struct {
	Method string `json:"method,omitempty"`
	Model  string `json:"model,omitempty"`
	TopN   *int   `json:"topN,omitempty"`
}

// RerankOption is retrieve.rerank: an object, or false (disabled).
type RerankOption struct {
	Disabled bool
	RerankParams
}

// UnmarshalJSON accepts false or an object.
func (r *RerankOption) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("false")) {
		*r = RerankOption{Disabled: true}
		return nil
	}
	if bytes.Equal(b, []byte("true")) {
		return &json.UnmarshalTypeError{Value: "bool", Type: nil, Field: "rerank"}
	}
	return json.Unmarshal(b, &r.RerankParams)
}

// MarshalJSON writes false or the object.
func (r RerankOption) MarshalJSON() ([]byte, error) {
	if r.Disabled {
		return []byte("false"), nil
	}
	return json.Marshal(r.RerankParams)
}

// StringOrFalse is an enum option that may be false (retrieve.rewrite).
type StringOrFalse struct {
	Value    string
	Disabled bool
}

// UnmarshalJSON accepts false or a string.
func (s *StringOrFalse) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("false")) {
		*s = StringOrFalse{Disabled: true}
		return nil
	}
	return json.Unmarshal(b, &s.Value)
}

// MarshalJSON writes false or the string.
func (s StringOrFalse) MarshalJSON() ([]byte, error) {
	if s.Disabled {
		return []byte("false"), nil
	}
	return json.Marshal(s.Value)
}

// MMRParams are retrieve.mmr.
type MMRParams struct {
	Lambda *float64 `json:"lambda,omitempty"`
}

// RecencyParams are retrieve.recency.
type RecencyParams struct {
	Field        string  `json:"field"`
	HalfLifeDays float64 `json:"halfLifeDays"`
}

// RetrieveParams are the params of retrieve (§7.7). Optional scalars are
// pointers so that absent (or null, §4.6) is distinguishable from zero.
type RetrieveParams struct {
	Query          QueryInput      `json:"query"`
	K              *int64          `json:"k,omitempty"`
	Mode           Mode            `json:"mode,omitempty"`
	Modality       string          `json:"modality,omitempty"`
	CandidateK     *int64          `json:"candidateK,omitempty"`
	Fusion         *FusionParams   `json:"fusion,omitempty"`
	Rerank         *RerankOption   `json:"rerank,omitempty"`
	MMR            *MMRParams      `json:"mmr,omitempty"`
	Rewrite        *StringOrFalse  `json:"rewrite,omitempty"`
	Filter         json.RawMessage `json:"filter,omitempty"`
	MinScore       *float64        `json:"minScore,omitempty"`
	Recency        *RecencyParams  `json:"recency,omitempty"`
	Unit           string          `json:"unit,omitempty"`
	Level          *int64          `json:"level,omitempty"`
	TokenBudget    *int64          `json:"tokenBudget,omitempty"`
	SessionID      string          `json:"sessionId,omitempty"`
	IncludeText    *bool           `json:"includeText,omitempty"`
	IncludeVectors *bool           `json:"includeVectors,omitempty"`
	Encoding       string          `json:"encoding,omitempty"`
	Seed           *int64          `json:"seed,omitempty"`
	IndexVersion   string          `json:"indexVersion,omitempty"`
	Strict         *bool           `json:"strict,omitempty"`
	Cursor         string          `json:"cursor,omitempty"`
	Meta           map[string]any  `json:"_meta,omitempty"`
}

// IsStrict returns the effective strict flag (default true, §7.7).
func (p *RetrieveParams) IsStrict() bool { return p.Strict == nil || *p.Strict }

// Citation is Hit.citation.
type Citation struct {
	Source string `json:"source,omitempty"`
	URI    string `json:"uri,omitempty"`
	Title  string `json:"title,omitempty"`
	// TitlePlain may vouch that Title needs no JSON escaping (Plain); it
	// is never sent.
	TitlePlain Plain `json:"-"`
	Start      *int  `json:"start,omitempty"`
	End        *int  `json:"end,omitempty"`
	Page       *int  `json:"page,omitempty"`
}

// Trust is Hit.trust (§15.2).
type Trust struct {
	Level              string   `json:"level"`
	Score              *float64 `json:"score,omitempty"`
	InjectionSuspected bool     `json:"injectionSuspected,omitempty"`
	Sanitized          bool     `json:"sanitized,omitempty"`
}

// ChunkInfo is Hit.chunk.
type ChunkInfo struct {
	DocID   string `json:"docId"`
	Index   int    `json:"index"`
	Context string `json:"context,omitempty"`
}

// Hit is one ranked result (§7.7). Vector holds []float32 or, under the
// f32-base64 encoding, a base64 string.
type Hit struct {
	ID string `json:"id"`
	// IDPlain may vouch that ID needs no JSON escaping (Plain); it is
	// never sent.
	IDPlain    Plain    `json:"-"`
	Score      float64  `json:"score"`
	Confidence *float64 `json:"confidence,omitempty"`
	Text       string   `json:"text,omitempty"`
	// TextPlain may vouch that Text needs no JSON escaping (Plain); it
	// is never sent.
	TextPlain Plain          `json:"-"`
	Unit      string         `json:"unit,omitempty"`
	Meta      map[string]any `json:"meta,omitempty"`
	Vector    any            `json:"vector,omitempty"`
	Scores    Scores         `json:"scores,omitempty"`
	Citation  *Citation      `json:"citation,omitempty"`
	Trust     *Trust         `json:"trust,omitempty"`
	Chunk     *ChunkInfo     `json:"chunk,omitempty"`
}

// Usage is retrieve result telemetry (§17.2).
type Usage struct {
	Candidates *int     `json:"candidates,omitempty"`
	Reranked   *int     `json:"reranked,omitempty"`
	LatencyMs  *int64   `json:"latencyMs,omitempty"`
	Tokens     *int     `json:"tokens,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

// RetrieveResult is the result of retrieve (§7.7).
type RetrieveResult struct {
	Hits           []Hit          `json:"hits"`
	NextCursor     string         `json:"nextCursor,omitempty"`
	IndexVersion   string         `json:"indexVersion,omitempty"`
	Usage          *Usage         `json:"usage,omitempty"`
	RewrittenQuery string         `json:"rewrittenQuery,omitempty"`
	Meta           map[string]any `json:"_meta,omitempty"`
}

// EmbedParams are the params of embed (§7.3). Texts is the legacy synonym
// of Inputs; both accept bare strings and Content blocks.
type EmbedParams struct {
	Inputs   []QueryInput   `json:"inputs,omitempty"`
	Texts    []QueryInput   `json:"texts,omitempty"`
	Kind     string         `json:"kind,omitempty"`
	Encoding string         `json:"encoding,omitempty"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

// EmbedResult is the result of embed (§7.3, §7.3.1). Vectors holds
// [][]float32 for json or []string for f32-base64.
type EmbedResult struct {
	Vectors   any    `json:"vectors"`
	Encoding  string `json:"encoding,omitempty"`
	Dimension int    `json:"dimension,omitempty"`
}

// Document is one index/add input document.
type Document struct {
	ID   string         `json:"id,omitempty"`
	Text string         `json:"text"`
	Meta map[string]any `json:"meta,omitempty"`
}

// IndexAddParams are the params of index/add (§7.10).
type IndexAddParams struct {
	Documents  []Document     `json:"documents"`
	Chunk      *bool          `json:"chunk,omitempty"`
	Contextual *bool          `json:"contextual,omitempty"`
	Meta       map[string]any `json:"_meta,omitempty"`
}

// IndexAddResult is the result of index/add.
type IndexAddResult struct {
	IDs []string `json:"ids"`
}

// IndexDeleteParams are the params of index/delete (§7.11).
type IndexDeleteParams struct {
	IDs []string `json:"ids"`
}

// IndexDeleteResult is the result of index/delete.
type IndexDeleteResult struct {
	Deleted int `json:"deleted"`
}

// PingParams are the params of ping; Nonce is echoed verbatim (§7.15).
type PingParams struct {
	Nonce json.RawMessage `json:"nonce,omitempty"`
}

// PingResult is the result of ping.
type PingResult struct {
	Nonce json.RawMessage `json:"nonce,omitempty"`
}

// RerankCallParams are the params of the rerank method (§7.6). (RerankParams
// is the retrieve.rerank option.)
type RerankCallParams struct {
	Query    QueryInput     `json:"query"`
	Passages []QueryInput   `json:"passages"`
	Method   string         `json:"method,omitempty"`
	Model    string         `json:"model,omitempty"`
	TopN     *int64         `json:"topN,omitempty"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

// RerankResult is the result of rerank (§7.6): Scores[i] scores
// passages[i]; Order lists the indices best first (truncated by topN).
type RerankResult struct {
	Scores []float64 `json:"scores"`
	Order  []int     `json:"order,omitempty"`
}

// FeedbackSignal is one signal about an earlier hit (§7.16).
type FeedbackSignal struct {
	HitID              json.RawMessage `json:"hitId"`
	Used               *bool           `json:"used,omitempty"`
	Cited              *bool           `json:"cited,omitempty"`
	Helpful            *bool           `json:"helpful,omitempty"`
	Reward             *float64        `json:"reward,omitempty"`
	PoisonSuspected    *bool           `json:"poisonSuspected,omitempty"`
	InjectionSuspected *bool           `json:"injectionSuspected,omitempty"`
}

// FeedbackParams are the params of feedback (§7.16).
type FeedbackParams struct {
	SessionID string           `json:"sessionId,omitempty"`
	Query     string           `json:"query,omitempty"`
	Signals   []FeedbackSignal `json:"signals"`
	Meta      map[string]any   `json:"_meta,omitempty"`
}

// FeedbackResult is the result of feedback: how many signals were recorded.
type FeedbackResult struct {
	Accepted int `json:"accepted"`
}
