// Package adapters is the contract between the portable retrieval pipeline
// (package retrieval) and the engine packages (elasticsearch, opensearch,
// qdrant, memory). It holds only what both sides must agree on, in the way
// database/sql/driver sits beside database/sql: the Adapter interface and
// its optional interfaces, the request and result types of one stage
// (SearchRequest, Plan, Candidates, Candidate), the write types (Document,
// Writer), the context values the pipeline and the access layer set for
// adapters, the Embedder interface, and the Registry of engine factories
// with their Config and Deps. RCP semantics (gating, funnel, fusion, MMR,
// packing, paging, score labels, error mapping) live in package retrieval,
// written once for every engine; an adapter never sees an RCP request.
//
// # Required
//
// Every engine implements Adapter. retrieval.NewEngine calls Probe once to
// derive the capabilities it advertises; each retrieve then calls Plan and
// Search once per recall stage (lexical, dense, or a native hybrid), with
// stages of one request running concurrently; ErrorCode classifies the
// adapter errors the Engine turns into RCP errors; Close is called when
// the Engine closes.
//
// # Optional interfaces
//
// The retrieval package checks for these with a type assertion at the
// moment it needs them:
//
//   - Writer (Upsert, Delete): asserted on the Adapter by index/add and
//     index/delete. Without it, or when the evidence does not mark the
//     index writable, both methods fail -32003 (capability missing).
//     Upsert receives documents whose ids are assigned and, when an
//     Embedder is configured and the engine does not embed, whose vectors
//     are filled in.
//   - Releaser (Release): asserted on the Adapter when a retrieve that ran
//     under a continuation (Candidates.Next) served its last page, so the
//     engine frees that state (e.g. a point in time) early.
//   - NativeReranker (NativeRerank): asserted on the Adapter at start-up
//     when the evidence reports Evidence.NativeReranker and no sidecar
//     reranker is configured; it then serves the rerank method and the
//     sidecar rerank stage. With Evidence.NativeRerankStage the Engine may
//     instead set SearchRequest.Rerank to rerank inside the search.
//   - RetryAfterer (RetryAfterMs): asserted with errors.As on an error an
//     adapter returned; a positive hint becomes error.data.retryAfterMs.
//
// # Context values
//
//   - WithCallGroup / CallGroupOf: the pipeline marks the concurrent
//     recall stages of one request as a CallGroup; decorators (such as a
//     circuit breaker) read it to admit the group as a unit.
//   - WithTenant / TenantFrom: the access layer marks a call scoped to one
//     tenant; the pipeline checks the tenant's writes, and adapters with
//     index isolation (Factory.TenantIndices) read it in Upsert and
//     Delete to pick the tenant's index.
//
// # Errors
//
// MappingLimitError is what an adapter's Upsert returns when the engine
// refuses a document that would grow the mapping past a limit; the
// pipeline passes it to the client unchanged.
//
// # Embedding
//
// Embedder turns text into vectors. The pipeline calls it for the embed
// method, for the query vector of a dense stage when the engine cannot
// embed the query itself, and for document vectors on index/add.
package adapters
