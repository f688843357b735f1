// Package filterdifftest is a test kit: a property-based differential
// test of §8 filters against a live Elasticsearch or OpenSearch engine.
//
// Each round generates an index whose fields are drawn from a table of
// field kinds (kinds.go): mapping parameters that change what a filter
// selects (ignore_above, normalizers, null_value, coerce, numeric
// precision, date resolution and format, objects, nested, aliases,
// copy_to, runtime and derived fields), and an alias over two indices that
// disagree on a field. It indexes a few hundred documents with boundary
// values raw through _bulk, opens the sidecar's adapter on the target and
// builds an retrieval.Engine, then sends filter trees over every (field,
// operator) pair the Engine advertises (Capabilities().Filter and
// FieldOps), in sparse mode on a token every document holds, following
// nextCursor to collect every match. It also sends leaves the sidecar must
// refuse: on fields it does not advertise (-32602 on filter.<field>), with
// operators it does not advertise (-32005) or the field does not serve
// (-32602), and with values of the wrong shape.
//
// What a filter selects comes from an oracle over the source documents
// (oracle.go), which implements §8 as the sidecar documents it and never
// asks the engine or the sidecar's own evaluator. An advertised pair may
// be refused only where RCP allows it (Round.Refusable: a value longer
// than ignore_above, or one the null_value matches), and then must be;
// otherwise the ids must equal the oracle's. A coverage guard fails when
// plain keyword, long, double, date, date_nanos, boolean or text fields
// with a plain keyword sub-field lose an operator §8 allows them. Dense
// retrieval is not exercised: it needs an embedder and vectors, and sparse
// retrieval reaches every document already.
//
// Only tests import this package. An adapter's test wires it to its engine
// with its own helpers and calls Run:
//
//	filterdifftest.Run(t, filterdifftest.Target{
//		Engine: "elasticsearch", URL: base, Package: "./adapters/elasticsearch/",
//		Features: filterdifftest.FeatureFlattened | filterdifftest.FeatureRuntime,
//		CreateIndex: func(ctx context.Context, name string, body map[string]any) error { ... },
//		DeleteIndex: func(name string) { ... },
//		Open: func(ctx context.Context, index, bm25Field string) (adapters.Adapter, error) { ... },
//	})
//
// EnvSeed (RCP_FILTERDIFF_SEED) fixes the seed, else DefaultSeed is used;
// EnvLong (RCP_FILTERDIFF_LONG=10m) runs fresh seeds for that long. Every
// seed logs a summary line; the first failure of each class is printed in
// full with the command that reproduces it, the filter, the mappings of
// its fields, the expected and returned ids, and the source values of the
// documents that differ.
package filterdifftest
