package opensearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dslfilter"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
)

// probeResponses are the raw bodies the probe reads, in call order. Tests
// replay recorded ones (testdata/probe/).
type probeResponses struct {
	Root, Plugins, Mapping, Settings, Pipelines, Cluster, Count []byte
}

// probeCalls names the read-only calls behind probeResponses.
func probeCalls(index string) []string {
	ix := url.PathEscape(index)
	return []string{"/", "/_cat/plugins?format=json", "/" + ix + "/_mapping", "/" + ix + "/_settings",
		"/_search/pipeline", "/_cluster/settings?include_defaults=true&flat_settings=true", "/" + ix + "/_count"}
}

// Probe implements adapters.Adapter.
func (a *adapter) Probe(ctx context.Context) (*capability.Evidence, error) {
	raw, err := a.fetch(ctx)
	if err != nil {
		return nil, err
	}
	if a.tenancy != nil {
		if raw.Mapping, raw.Settings, err = a.configuredResponses(); err != nil {
			return nil, err
		}
	}
	s, err := buildSchema(a.cfg, raw)
	if err != nil {
		return nil, err
	}
	if a.tenancy != nil {
		s.ev.TenantIndices = true
		s.ev.Notes = append(s.ev.Notes, fmt.Sprintf("tenants are isolated by index: each in %s, created on its first write; callers without a tenant read %s and cannot write", a.tenancy.Template, a.cfg.Index))
	}
	s.ev.NativeReranker = a.probeReranker(ctx)
	a.raw.Store(raw)
	a.setSchema(s)
	return s.ev, nil
}

// optionalCalls are probe calls whose refusal (404: no stored pipeline;
// 401/403: a user without cluster privileges) means "feature not proven",
// not a failed probe.
var optionalCalls = map[int]bool{1: true, 4: true, 5: true}

// tenantSkipped are the probe calls on the target's mapping, settings and
// count, which index isolation does not read: capabilities come from the
// configured tenant index body.
var tenantSkipped = map[int]bool{2: true, 3: true, 6: true}

// serverlessSkipped are the probe calls OpenSearch Serverless does not
// serve (GET /, _cat/plugins, _search/pipeline, _cluster/settings; AWS,
// "Supported operations and plugins in Amazon OpenSearch Serverless");
// serverlessOptional may be refused by a collection's data access policy
// (_count needs aoss:ReadDocument).
var (
	serverlessSkipped  = map[int]bool{0: true, 1: true, 4: true, 5: true}
	serverlessOptional = map[int]bool{6: true}
)

// fetch runs the probe calls (on Serverless, only those it serves).
func (a *adapter) fetch(ctx context.Context) (*probeResponses, error) {
	calls := probeCalls(a.cfg.Index)
	out := make([][]byte, len(calls))
	serverless := a.cfg.serverless()
	for i, path := range calls {
		if a.tenancy != nil && tenantSkipped[i] || serverless && serverlessSkipped[i] {
			continue // the configured body stands in for them, or Serverless lacks them
		}
		res, err := a.http.do(ctx, http.MethodGet, path, nil, false)
		if (optionalCalls[i] || serverless && serverlessOptional[i]) && refused(err) {
			a.log.Debug("optional probe call refused", "path", path, "err", err)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("opensearch: probe: %w", err)
		}
		out[i] = res.Body
	}
	return &probeResponses{out[0], out[1], out[2], out[3], out[4], out[5], out[6]}, nil
}

func refused(err error) bool {
	var oe *Error
	if !errors.As(err, &oe) {
		return false
	}
	switch oe.Status {
	case http.StatusNotFound, http.StatusUnauthorized, http.StatusForbidden:
		return true
	}
	return false
}

// schema is the probed view of the target that Plan and Search need.
type schema struct {
	ev      *capability.Evidence
	version version
	vectors map[string]vectorInfo
	// filters says how each offered filter field translates.
	filters map[string]dslfilter.Field
	content string
	// hybrid: neural-search is installed and has the RRF score ranker.
	hybrid bool
	// mmr: the version has ext.mmr and the cluster enables its factories.
	mmr bool
}

// serverlessVersion is Evidence.Version of a Serverless collection, which
// reports none.
const serverlessVersion = "serverless"

// serverlessNote is the probe's account of what Serverless does not show.
const serverlessNote = "OpenSearch Serverless (aws.service aoss): GET /, _cat/plugins, _search/pipeline and _cluster/settings are not served, so the version and plugins are unknown; capabilities come from the index mapping and settings alone; native hybrid and engine MMR are not offered (fusion and MMR run in the sidecar); quantised vector fields are treated as approximate"

// rootVersion reads GET / (a Serverless collection has none: the zero
// version, which enables no version-gated feature).
func rootVersion(cfg *Config, raw []byte) (version, string, error) {
	if cfg.serverless() {
		return version{}, serverlessVersion, nil
	}
	var root rootInfo
	if err := json.Unmarshal(raw, &root); err != nil {
		return version{}, "", fmt.Errorf("opensearch: decode GET /: %w", err)
	}
	if root.Version.Distribution != "opensearch" {
		return version{}, "", fmt.Errorf("opensearch: the engine at %v reports distribution %q, not opensearch", cfg.URLs, root.Version.Distribution)
	}
	v, err := parseVersion(root.Version.Number)
	return v, root.Version.Number, err
}

// buildSchema derives the schema and evidence from probe responses. Pure.
func buildSchema(cfg *Config, r *probeResponses) (*schema, error) {
	v, number, err := rootVersion(cfg, r.Root)
	if err != nil {
		return nil, err
	}
	m, err := mapping.Read(r.Mapping)
	if err != nil {
		return nil, fmt.Errorf("opensearch: %w", err)
	}
	f := parseMappings(m)
	st, err := parseSettings(r.Settings)
	if err != nil {
		return nil, err
	}
	// OpenSearch does not list values dropped by ignore_above in _ignored.
	filters := dslfilter.Analyze(m, dslfilter.Options{})
	s := &schema{version: v, vectors: f.vectors, filters: filters.Plan}
	ev := &capability.Evidence{Engine: Name, Version: number, Target: cfg.Index,
		Writable: cfg.Writable, Pagination: true, Deterministic: st.SingleCopy}
	s.ev = ev
	plugins := pluginSet(r.Plugins)
	ev.FilterFields = filters.Filter
	if err := s.fillFields(cfg, f, st); err != nil {
		return nil, err
	}
	ev.Notes = append(ev.Notes, filters.Notes...)
	if cfg.serverless() {
		ev.Notes = append(ev.Notes, serverlessNote)
	}
	s.fillNative(v, plugins, r)
	ev.DocCount = docCount(r.Count)
	return s, nil
}

func pluginSet(raw []byte) map[string]bool {
	var rows []catPlugin
	_ = json.Unmarshal(raw, &rows) // an unreadable listing means no plugins
	set := map[string]bool{}
	for _, p := range rows {
		set[p.Component] = true
	}
	return set
}

func docCount(raw []byte) int64 {
	var c struct {
		Count int64 `json:"count"`
	}
	_ = json.Unmarshal(raw, &c) // unknown count stays 0
	return c.Count
}

// fillFields records text, vector and filter fields and the content,
// title and URI fields.
func (s *schema) fillFields(cfg *Config, f *fields, st settingsFacts) error {
	ev := s.ev
	text, err := textFields(cfg, f)
	if err != nil {
		return err
	}
	ev.TextFields = text
	var vnotes []string
	ev.VectorFields, vnotes, err = vectorFields(cfg, f, st.KNN)
	if err != nil {
		return err
	}
	ev.Notes = append(ev.Notes, vnotes...)
	for i := range ev.VectorFields {
		vf := &ev.VectorFields[i]
		if note := describeQuantisation(vf, f.vectors[vf.Name], s.version, ev.Version); note != "" {
			ev.Notes = append(ev.Notes, note)
		}
	}
	ev.MappedFields = f.leaves
	s.content = pick(cfg.ContentField, f.strings, []string{"text", "content", "body"}, f.text)
	ev.ReservedFields = []string{contentField(s)}
	ev.TitleField = pick(cfg.TitleField, f.strings, []string{"title"}, nil)
	ev.URIField = pick(cfg.URIField, f.strings, []string{"url", "uri"}, nil)
	ev.Notes = append(ev.Notes, f.notes...)
	for _, c := range f.conflicts {
		ev.Notes = append(ev.Notes, fmt.Sprintf("field %q has different types across the indices behind %q; not offered", c, cfg.Index))
	}
	if len(f.vectors) > 0 && !st.KNN {
		ev.Notes = append(ev.Notes, "index.knn is not true: knn_vector fields are not built for ANN search; dense unavailable")
	}
	return nil
}

// pick returns the configured field, else the first candidate present in
// the mapping, else the first fallback.
func pick(configured string, present map[string]filterlang.FieldType, candidates, fallback []string) string {
	if configured != "" {
		return configured
	}
	for _, c := range candidates {
		if _, ok := present[c]; ok {
			return c
		}
	}
	if len(fallback) > 0 {
		return fallback[0]
	}
	return ""
}

func textFields(cfg *Config, f *fields) ([]capability.TextField, error) {
	if len(cfg.TextFields) == 0 {
		out := make([]capability.TextField, len(f.text))
		for i, n := range f.text {
			out[i] = capability.TextField{Name: n}
		}
		return out, nil
	}
	out := make([]capability.TextField, 0, len(cfg.TextFields))
	for _, tf := range cfg.TextFields {
		if !slices.Contains(f.text, tf.Name) {
			return nil, fmt.Errorf("opensearch: text_fields: %q is not a text field of %q", tf.Name, cfg.Index)
		}
		out = append(out, capability.TextField{Name: tf.Name, Boost: tf.Boost})
	}
	return out, nil
}

// vectorFields lists knn_vector fields whose data_type an embedder can
// produce (float, or byte for an int8 embedder: capability.DenseField);
// the configured one first. Binary fields are left out with a note: no
// embedder of the sidecar produces packed bits. A knn_vector mapping
// proves the k-NN plugin; without index.knn the knn query fails ("not
// built for ANN search", verified on 3.5), so no field is offered then.
// Fields of trained models (model_id) have no dimension in the mapping
// and are skipped.
func vectorFields(cfg *Config, f *fields, knn bool) ([]capability.VectorField, []string, error) {
	names := make([]string, 0, len(f.vectors))
	for n := range f.vectors {
		names = append(names, n)
	}
	slices.Sort(names)
	if cfg.VectorField != "" {
		if _, ok := f.vectors[cfg.VectorField]; !ok {
			return nil, nil, fmt.Errorf("opensearch: vector_field: %q is not a knn_vector field of %q", cfg.VectorField, cfg.Index)
		}
		names = append([]string{cfg.VectorField}, slices.DeleteFunc(names, func(n string) bool { return n == cfg.VectorField })...)
	}
	var out []capability.VectorField
	var notes []string
	for _, n := range names {
		vi := f.vectors[n]
		if !knn || vi.Dims == 0 {
			continue
		}
		el, ok := elementOf(vi.DataType)
		if !ok {
			notes = append(notes, fmt.Sprintf("vector field %q (data_type %s, dimension %d) cannot serve kNN here%s; not offered", n, vi.DataType, vi.Dims, unservedWhy(vi.DataType)))
			continue
		}
		out = append(out, capability.VectorField{Name: n, Dims: vi.Dims, Similarity: similarity(vi.Space), Element: el,
			Indexed: knn, Detail: map[string]string{"space_type": vi.Space, "engine": vi.Engine,
				"method": vi.Method, "data_type": vi.DataType}})
	}
	return out, notes, nil
}

// elementOf maps a knn_vector data_type to the vector element an embedder
// must produce; ok is false for binary (packed bits) and unknown types,
// which no embedder of the sidecar produces. The k-NN plugin scores byte
// vectors with the float formulas of their space_type (verified on 3.5,
// lucene: cosinesimil, innerproduct, l2).
func elementOf(dataType string) (capability.Element, bool) {
	switch dataType {
	case "float":
		return capability.ElementFloat, true
	case "byte":
		return capability.ElementInt8, true
	}
	return "", false
}

// unservedWhy explains a data_type no embedder can serve.
func unservedWhy(dataType string) string {
	if dataType == "binary" {
		return fmt.Sprintf(": data_type binary needs %s (packed bit) query vectors and the sidecar's embedders produce only float or int8 (embedder.element_type)", capability.ElementBinary)
	}
	return fmt.Sprintf(": data_type %s is not known to the sidecar", dataType)
}

// mmrSince is the first version whose search takes ext.mmr.
var mmrSince = [2]int{3, 3}

// fillNative records native hybrid and MMR availability, honestly.
func (s *schema) fillNative(v version, plugins map[string]bool, r *probeResponses) {
	ev := s.ev
	s.hybrid = plugins[pluginNeural] && plugins[pluginKNN] && v.atLeast(2, 19)
	ev.NativeRRF = s.hybrid && len(ev.TextFields) > 0 && len(ev.VectorFields) > 0
	switch {
	case ev.NativeRRF:
		ev.Notes = append(ev.Notes, "native hybrid: hybrid query with a temporary score-ranker-processor (rrf) pipeline")
	case ev.Version == serverlessVersion: // serverlessNote says why
	case !plugins[pluginNeural]:
		ev.Notes = append(ev.Notes, "opensearch-neural-search is not installed: hybrid fusion runs in the sidecar")
	}
	if pf, err := parsePipelines(r.Pipelines); err == nil && len(pf.Normalization)+len(pf.ScoreRanker) > 0 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("stored hybrid pipelines: normalization %v, score-ranker %v (not used: the adapter sends its own)", pf.Normalization, pf.ScoreRanker))
	}
	s.mmr = v.atLeast(mmrSince[0], mmrSince[1]) && plugins[pluginKNN] && mmrFactories(r.Cluster)
	ev.NativeMMR = s.mmr && len(ev.VectorFields) > 0
	if v.atLeast(mmrSince[0], mmrSince[1]) && !s.mmr {
		ev.Notes = append(ev.Notes, "engine MMR needs cluster.search.enabled_system_generated_factories with the mmr factories")
	}
}
