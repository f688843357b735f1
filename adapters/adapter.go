package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Adapter is implemented by one package per engine. Only the retrieval
// Engine calls it, and only with requests that are validated, clamped and
// restricted to what the adapter's own Probe evidence allows.
// Implementations are safe for concurrent use.
type Adapter interface {
	// Probe inspects the live engine with read-only, idempotent calls.
	Probe(ctx context.Context) (*capability.Evidence, error)
	// Plan translates one stage of a request into the exact native request,
	// without I/O. Equal requests yield byte-identical plans.
	Plan(req *SearchRequest) (*Plan, error)
	// Search executes a plan. Hits come back in engine order with scores
	// already converted to the scale named in Candidates.Scale. No partial
	// results on error; ctx is honoured.
	Search(ctx context.Context, p *Plan) (*Candidates, error)
	// ErrorCode classifies an error returned by this adapter. Unknown
	// errors are CodeInternalError; never 0.
	ErrorCode(err error) rcp.Code
	// Close releases clients; afterwards only ErrorCode may be called.
	Close() error
}

// Writer is implemented by adapters whose engine accepts index/add and
// index/delete (§7.10–7.11).
type Writer interface {
	// Upsert writes docs by id (ids are already assigned and non-empty).
	// Re-adding an id replaces the document. Vectors are filled in by the
	// Engine when an embedder is configured.
	Upsert(ctx context.Context, docs []Document) error
	// Delete removes ids and returns how many actually existed.
	Delete(ctx context.Context, ids []string) (deleted int, err error)
}

// RetryAfterer may be implemented by errors to carry a retry hint in ms.
type RetryAfterer interface{ RetryAfterMs() int64 }

// Refuser may be implemented by an adapter (the resilient decorator)
// that knows, before a call, that its engine's calls are refused now (an
// open circuit breaker): Refusing returns the error such a call would
// return, nil otherwise. A request checks it before work that only serves
// the engine's calls, such as embedding the query, so that an engine
// outage does not turn into traffic to the embedder.
type Refuser interface{ Refusing() error }

// PartialFailure may be implemented by engine errors that concern part of
// the engine (a shard copy, a node's search context, some shards of an
// answer) while the engine answered the request as a whole. The circuit
// breaker counts them as answers, never as failures of the backend: a lost
// node must not refuse every client.
type PartialFailure interface{ PartialFailure() bool }

// Stage is one recall stage the adapter is asked to run.
type Stage string

// Stages.
const (
	StageLexical Stage = "sparse" // BM25 over text fields
	StageDense   Stage = "dense"  // vector kNN
	StageHybrid  Stage = "hybrid" // native fusion in the engine
)

// SearchRequest is one validated, clamped stage request.
type SearchRequest struct {
	Stage Stage
	// Tenant, under index isolation (Evidence.TenantIndices), names the
	// tenant whose own index the stage searches; "" is the configured
	// target.
	Tenant string
	// Text is the query text (lexical, and dense when the engine embeds).
	Text string
	// Vector is the query embedding for dense stages when the sidecar embeds.
	Vector []float32
	// TextFields and VectorField are chosen from the evidence.
	TextFields  []capability.TextField
	VectorField string
	// Filter is the validated filter, nil when absent.
	Filter filterlang.Filter
	// K is how many hits to return; CandidateK is how many the engine
	// considers (e.g. kNN num_candidates). CandidateK >= K.
	K, CandidateK int
	// From is the offset for cursor pagination (0 for the first page).
	// When After is set, From is instead how many hits precede After (the
	// adapter must not skip them again; it may use From to size kNN).
	From int
	// After is the Candidate.Sort of the last hit served on the previous
	// page, when that page ran under a continuation (Candidates.Next).
	After json.RawMessage
	// Resume is the Candidates.Next the previous page returned (e.g. a
	// point-in-time id); set together with After.
	Resume json.RawMessage
	// Paginate asks the adapter for a continuation (Candidates.Next) on
	// a first page: the Engine sets it only for single-stage requests
	// whose pages follow the engine's own order (no sidecar reordering).
	Paginate bool
	// Unit is the requested granularity when the adapter's evidence lists
	// it in Units ("" is the chunk default). For "document" the adapter
	// returns the best hit per document with Candidate.DocID set.
	Unit string
	// Recency, when set (only on adapters with Evidence.NativeRecency),
	// multiplies each score by 0.5^(age/halfLife) on a date field (§7.7).
	Recency *Recency
	// IndexVersion is a snapshot the client pinned (a Candidates.
	// IndexVersion this adapter returned earlier), only on adapters with
	// Evidence.Snapshots. The adapter serves it or fails -32010 (§7.7.1).
	IndexVersion string
	// RRFK is the RRF constant for native hybrid stages. The Engine plans a
	// StageHybrid only when native RRF reproduces RCP exactly: unit weights
	// for both lists and, when Evidence.NativeRRFKs is set, an RRFK from it.
	RRFK int
	// WithVectors asks for document vectors (MMR, includeVectors).
	WithVectors bool
	// WithText asks for document text.
	WithText bool
	// MinScore, when set, is passed to the engine in the stage's scale.
	MinScore *float64
	// Seed is the determinism hint (§7.7.1).
	Seed *int64
	// MMRLambda, when set on a dense stage of an adapter whose evidence
	// has NativeMMR, asks the engine to diversify natively with this RCP
	// lambda (§7.7). The adapter returns hits in MMR order with scores that
	// never increase down the list and the raw similarity in
	// Candidate.Scores.
	MMRLambda *float64
	// Rerank, set only on adapters whose evidence has NativeRerankStage,
	// asks the engine to rerank the stage's top Rerank.WindowSize hits
	// with its own reranker (Evidence.NativeReranker) against
	// Rerank.Text, inside the same search (§7.7 funnel). Hits come back
	// in the reranker's order, at most WindowSize of them, with the
	// reranker's scores (ScaleUnbounded, no floor).
	Rerank *RerankStage
}

// RerankStage is retrieve's rerank stage run by the engine.
type RerankStage struct {
	// Text is the query the passages are scored against.
	Text string
	// WindowSize is how many of the stage's top hits are reranked (the
	// funnel's topN); only those are returned.
	WindowSize int
}

// NativeReranker is implemented by adapters whose engine reranks
// passages itself (Evidence.NativeReranker): the rerank method (§7.6) and
// retrieve's rerank stage use it when no sidecar reranker is configured.
// Decorators forward it and return ErrNoNativeRerank when the adapter
// they wrap has none.
type NativeReranker interface {
	// NativeRerank returns one score per passage, higher is more relevant.
	NativeRerank(ctx context.Context, query string, passages []string) ([]float64, error)
}

// ErrNoNativeRerank is what a decorator's NativeRerank returns when the
// adapter it wraps is not a NativeReranker.
var ErrNoNativeRerank = errors.New("adapters: the adapter has no native reranker")

// Recency is a validated retrieve.recency: Field is an advertised date
// filter field and HalfLifeDays is positive and finite.
type Recency struct {
	Field        string
	HalfLifeDays float64
}

// Plan is an exact native request, comparable byte for byte in golden tests.
type Plan struct {
	Adapter string          `json:"adapter"`
	Stage   Stage           `json:"stage"`
	Target  string          `json:"target"`
	Op      string          `json:"op"`
	Body    json.RawMessage `json:"body"`
	// Scale and Floor describe the scores the plan will produce.
	Scale rcp.ScoreScale `json:"scale"`
	Floor *float64       `json:"floor,omitempty"`
}

// Candidate is one hit as the engine returned it.
type Candidate struct {
	ID string
	// IDPlain may vouch that ID needs no JSON escaping (rcp.Plain).
	IDPlain rcp.Plain
	Score   float64
	Text    string
	// TextPlain may vouch that Text needs no JSON escaping (rcp.Plain).
	TextPlain rcp.Plain
	Title     string
	// TitlePlain may vouch that Title needs no JSON escaping (rcp.Plain).
	TitlePlain rcp.Plain
	URI        string
	// Meta is the hit's metadata. A value may be an rcp.RawJSON (the
	// engine's text, written as its decoded value would be): code that
	// looks inside a value reads it through rcp.MetaValue.
	Meta     map[string]any
	Vector   []float32
	Citation *rcp.Citation
	// Sort holds the engine's sort values for search_after pagination.
	Sort json.RawMessage
	// Scores are extra per-stage raw scores for Hit.scores (e.g. the raw
	// similarity behind a native-MMR re-score), keyed like Hit.scores; they
	// override the stage's own key (Score) in Hit.scores.
	Scores map[string]float64
	// DocID is the document the hit belongs to when SearchRequest.Unit is
	// "document"; the Engine keeps the first hit per DocID after fusion.
	DocID string
}

// Candidates is the result of one Search.
type Candidates struct {
	Hits []Candidate
	// Scale and Floor label the scores as returned; they win over the
	// plan's for _meta.scoreScale/scoreFloor (§6.1). An empty Scale takes
	// the plan's Scale and Floor. l2/manhattan distances converted to
	// 1/(1+d) are ScaleUnbounded with Floor 0 (capability.ModeScale).
	Scale rcp.ScoreScale
	Floor *float64
	// Total is the number of matches when the engine reports it (-1 unknown).
	Total int64
	// IndexVersion is the snapshot served, when the adapter knows it; the
	// Engine seals it into the result's indexVersion.
	IndexVersion string
	// Notes are facts worth reporting; the Engine appends them, once
	// each, to usage.notes.
	Notes []string
	// Next is opaque adapter state for the next page (e.g. a point in
	// time), returned only when the request asked for it (Paginate or
	// Resume). The Engine seals it in the cursor and hands it back as
	// SearchRequest.Resume with After = the last served hit's Sort. Nil
	// keeps offset paging.
	Next json.RawMessage
}

// Releaser may be implemented by adapters that return Candidates.Next:
// the Engine calls Release when no further page will be requested (the
// last page was served), so engine resources are freed early.
type Releaser interface {
	Release(ctx context.Context, next json.RawMessage) error
}

// ErrNoRelease is what a decorator's Release returns when the adapter it
// wraps is not a Releaser: the Engine then treats the adapter as one
// that is not (its snapshot stays pinnable).
var ErrNoRelease = errors.New("adapters: the adapter does not release continuations")

// Document is a document to upsert.
type Document struct {
	ID     string
	Text   string
	Meta   map[string]any
	Vector []float32
	// VectorField is the field Vector belongs in: the one dense retrieval
	// searches (capability.DenseField, whose dimension and element type
	// are the embedder's). "" means the adapter's first vector field.
	VectorField string
}

// VectorFieldsOf lists, once each in order, the fields docs' vectors are
// written to: each document's VectorField, else def; "" is left out.
func VectorFieldsOf(docs []Document, def string) []string {
	var out []string
	for _, d := range docs {
		vf := d.VectorField
		if vf == "" {
			vf = def
		}
		if vf != "" && len(d.Vector) > 0 && !slices.Contains(out, vf) {
			out = append(out, vf)
		}
	}
	return out
}
