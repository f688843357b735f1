// Package capability turns what a probe proved about a live engine
// (Evidence) into the honest RCP capability set (§6): absent means
// unavailable, and nothing is advertised that cannot be served. Pure.
package capability

import (
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Similarity is a vector similarity as the engine computes it.
type Similarity string

// Vector similarities.
const (
	SimCosine    Similarity = "cosine"
	SimDot       Similarity = "dot"
	SimL2        Similarity = "l2"
	SimManhattan Similarity = "manhattan"
)

// TextField is a BM25-searchable text field and its query-time boost.
type TextField struct {
	Name  string  `json:"name"`
	Boost float64 `json:"boost,omitempty"`
}

// VectorField is a dense vector field found by the probe.
type VectorField struct {
	Name       string     `json:"name"`
	Dims       int        `json:"dims"`
	Similarity Similarity `json:"similarity"`
	// Element is the type of the stored components ("" means
	// ElementFloat): only an embedder of the same element type can
	// search the field (DenseField).
	Element Element `json:"element,omitempty"`
	// Indexed reports whether approximate kNN search is possible on it.
	Indexed bool `json:"indexed"`
	// ApproxScores: the engine scores this field on quantised (compressed)
	// vectors and the adapter cannot have them rescored with the original
	// ones, so dense scores only approximate Similarity. Dense scores on it
	// are labelled "unbounded" with no floor (ModeScale): a cosine label
	// or floor would promise an exactness the scores lack.
	ApproxScores bool `json:"approxScores,omitempty"`
	// Detail holds engine-specific facts (element type, HNSW engine,
	// quantisation, …).
	Detail map[string]string `json:"detail,omitempty"`
}

// FilterField is a field the engine can filter on with exact semantics.
type FilterField struct {
	Name string               `json:"name"`
	Type filterlang.FieldType `json:"type"`
	// Ops lists the operators whose native semantics are exact for this
	// field; nil means every operator §8 allows for Type.
	Ops []filterlang.Op `json:"ops,omitempty"`
	// Precision is how a float field stores its values; the capability
	// declares it (rcp.FilterCap.FieldPrecision). Zero for other types.
	Precision rcp.FieldPrecision `json:"precision,omitzero"`
}

// Evidence is what a probe proved about a live engine and one target
// (index, alias or collection). Every capability derives from it.
type Evidence struct {
	Engine  string `json:"engine"`
	Version string `json:"version"`
	Target  string `json:"target"`

	TextFields   []TextField   `json:"textFields,omitempty"`
	VectorFields []VectorField `json:"vectorFields,omitempty"`
	FilterFields []FilterField `json:"filterFields,omitempty"`

	// NativeRRF: the engine can fuse lexical and dense lists itself with
	// RCP's 1/(rrfK+rank) formula.
	NativeRRF bool `json:"nativeRRF,omitempty"`
	// NativeRRFKs, when non-nil, lists the only rrfK values native RRF
	// reproduces exactly (e.g. an engine whose k is fixed); nil means any
	// positive rrfK. Other values are fused in the sidecar.
	NativeRRFKs []int `json:"nativeRRFKs,omitempty"`
	// NativeMMR: the engine can diversify a dense stage with MMR itself
	// (SearchRequest.MMRLambda), returning non-increasing scores and the raw
	// similarity in Candidate.Scores.
	NativeMMR bool `json:"nativeMMR,omitempty"`
	// QueryInference: the engine embeds the query text itself.
	QueryInference bool `json:"queryInference,omitempty"`
	// Writable: the engine accepts writes to the target.
	Writable bool `json:"writable,omitempty"`
	// Pagination: the adapter can page with opaque cursors.
	Pagination bool `json:"pagination,omitempty"`
	// Snapshots: the adapter can pin and echo an indexVersion.
	Snapshots bool `json:"snapshots,omitempty"`
	// Units lists the retrieval granularities the adapter can return
	// (SearchRequest.Unit), "chunk" included; nil means chunk/passage only.
	Units []string `json:"units,omitempty"`
	// NativeRecency: the adapter applies SearchRequest.Recency in the
	// engine, on filter fields of type date.
	NativeRecency bool `json:"nativeRecency,omitempty"`
	// RecencyLexicalOnly: NativeRecency applies to lexical stages only (a
	// kNN search cannot be rescored exactly); dense stages run without it.
	RecencyLexicalOnly bool `json:"recencyLexicalOnly,omitempty"`
	// Deterministic: equal requests return equal hits in equal order,
	// ties included (§7.7.1).
	Deterministic bool `json:"deterministic,omitempty"`
	// TitleField and URIField feed Hit.citation when set.
	TitleField string `json:"titleField,omitempty"`
	URIField   string `json:"uriField,omitempty"`
	// DocCount is the number of documents in the target, when known.
	DocCount int64 `json:"docCount,omitempty"`
	// ReservedFields are the paths index/add writes from a document's own
	// text and id (the content field, an id key): meta may not set them.
	ReservedFields []string `json:"reservedFields,omitempty"`
	// MappedFields are the leaf fields of the target's mapping (multi-fields
	// excluded), nil when the engine keeps no mapping. Tenant writes count
	// a meta path neither listed nor below a listed leaf as a new field.
	// Not printed: it is bookkeeping, and it grows as documents are added.
	MappedFields []string `json:"-"`
	// TenantIndices: the adapter keeps each tenant's documents in an index
	// of its own (SearchRequest.Tenant, TenantFrom on writes).
	TenantIndices bool `json:"tenantIndices,omitempty"`
	// NativeReranker is the reranker the engine serves itself (e.g. an
	// inference endpoint), as the probe proved it: the adapter implements
	// adapters.NativeReranker. Nil when the engine offers none; with
	// Failed set when one was looked for and is not usable (Failed says
	// why, for probe's explanation). A sidecar reranker (Policy.Reranker)
	// takes precedence.
	NativeReranker *RerankerFacts `json:"nativeReranker,omitempty"`
	// NativeRerankStage: the adapter can run retrieve's rerank stage in
	// the engine (SearchRequest.Rerank) with NativeReranker.
	NativeRerankStage bool `json:"nativeRerankStage,omitempty"`
	// Notes are facts the operator should know (conflicts, narrowing).
	Notes []string `json:"notes,omitempty"`
}

// Element is the type of a vector's components: what a vector field
// stores and what an embedder produces. Dense retrieval on a field needs
// an embedder of the field's element type (DenseField).
type Element string

// Elements. The empty Element means ElementFloat.
const (
	// ElementFloat: 32-bit floats.
	ElementFloat Element = "float"
	// ElementInt8: signed bytes, integers in [-128, 127] (Elasticsearch
	// element_type byte, OpenSearch data_type byte).
	ElementInt8 Element = "int8"
	// ElementBinary: packed bits, dims/8 signed bytes (Elasticsearch
	// element_type bit, OpenSearch data_type binary). No embedder of the
	// sidecar produces it.
	ElementBinary Element = "binary"
)

// OrFloat is e, or ElementFloat when e is empty.
func (e Element) OrFloat() Element {
	if e == "" {
		return ElementFloat
	}
	return e
}
