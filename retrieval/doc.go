// Package retrieval is the portable RCP layer: Engine implements the RCP
// methods (retrieve, embed, index/add, index/delete) once, over any engine
// that implements the adapters contract, in the way database/sql sits
// above database/sql/driver. Package adapters holds only that contract
// and lists its optional interfaces and when this package calls them;
// the engine packages implement it and never import this one.
//
// NewEngine probes the adapter once and fixes the capability set it then
// advertises (§13.2). A retrieve (Engine.Retrieve, engine.go) runs as named
// steps, one file each:
//
//   - gate.go: validate the request against the advertised capabilities
//     (strict or degraded options, filters, fusion, MMR, budgets);
//     tenancy.go adds the tenant checks of writes.
//   - stages.go: clamp the funnel, plan one adapters.SearchRequest per
//     recall stage and run the stages concurrently as one call group.
//   - rank.go: fuse the stage lists (RRF, weighted, convex), diversify
//     (MMR) and apply minScore; native.go decides when the engine does
//     fusion or MMR itself because it reproduces RCP exactly.
//   - page.go: offsets, engine continuations, pinned index versions,
//     recency and one-hit-per-document units.
//   - result.go: pack the page into hits with score labels, usage and a
//     sealed cursor; report.go streams progress and logs when asked.
//   - errors.go: the single error boundary that turns adapter errors into
//     RCP errors; trace.go: one span per step.
//
// write.go holds embed, index/add and index/delete. The state a request
// carries from step to step is declared once, in types.go.
//
// Engine satisfies the server's Backend interface; the assertion lives in
// the package's tests so that the pipeline does not import the server.
package retrieval
