// Package opensearch is the RCP adapter for OpenSearch 2.19 / 3.x with the
// k-NN plugin.
//
// # Probe
//
// Read-only calls (on Serverless only mapping, settings and count, see
// AWS below): GET / (version.distribution must be "opensearch"),
// GET /_cat/plugins?format=json (opensearch-knn, opensearch-neural-search,
// opensearch-ml), GET /<index>/_mapping (text fields, knn_vector fields
// with dimension, space_type, engine and method; keyword, numeric, date and
// boolean fields), GET /<index>/_settings (index.knn), GET
// /_search/pipeline (stored normalisation/score-ranker processors),
// GET /_cluster/settings?include_defaults=true (MMR factories, 3.3+) and
// GET /<index>/_count.
//
// # Capabilities
//
//   - sparse: at least one text field (multi_match over them, boosts from
//     the configuration).
//   - dense: a knn_vector field of data_type float (or byte, for an int8
//     embedder; binary fields are left out with a note); the query is embedded
//     by the sidecar's embedder (dims must match, decided by Derive). The
//     filter goes inside the knn clause, so it is applied during the
//     approximate search (lucene and faiss engines) and k hits come back
//     whenever k documents match.
//   - NativeRRF: only when opensearch-neural-search is installed and the
//     version has the RRF score-ranker processor (2.19+); the plan then
//     carries a temporary search pipeline. Otherwise the sidecar fuses and
//     says so in Evidence.Notes.
//   - NativeMMR: 3.3+ with the k-NN plugin and the cluster setting
//     cluster.search.enabled_system_generated_factories enabling the MMR
//     factories. The engine keeps each hit's original similarity, so the
//     adapter re-scores (running minimum, raw value in scores.dense) to keep
//     scores non-increasing (§4.6); see mmr.go.
//   - filter fields: keyword, numeric, date and boolean with every §8
//     operator; text fields with every operator through a keyword
//     sub-field (contains = case-sensitive substring, escaped wildcard),
//     else with exists only.
//   - writes: only when the configuration says writable. A document that
//     would grow the mapping past one of its limits is -32602 on
//     documents[i].meta naming the setting.
//   - tenancy mode index (Deps.TenantIndex, tenants.go): each tenant in
//     an index of its own, created from the configured body on its first
//     write; capabilities come from that body instead of GET
//     /<index>/_mapping and _settings, and index is what callers without
//     a tenant read.
//
// # Emulated
//
// Hybrid fusion, MMR and token packing run in the sidecar unless NativeRRF
// holds.
//
// # Scores
//
// sparse: BM25 `_score` (scale bm25, floor 0). dense: the k-NN `_score` is
// inverted per space_type (verified against a live 3.5 node for the lucene
// engine):
//   - cosinesimil: `_score` = (1+cos)/2 → cos = 2s−1 (scale cosine, floor −1).
//   - innerproduct: `_score` = dot+1 for dot > 0, 1/(1−dot) otherwise → the
//     raw dot product (scale dot, no floor).
//   - l2: `_score` = 1/(1+d²) is kept: monotone in −d², strictly positive
//     (scale unbounded, floor 0). l1, linf and hamming: 1/(1+d), likewise.
//
// Hybrid (native RRF): Σ w/(k+rank) (scale unbounded, floor 0). The native
// hybrid plan (hybrid query, hybrid-level filter, temporary
// score-ranker-processor pipeline) is golden-tested only: neural-search is
// not published on Maven Central, so it has not run against a live node.
//
// # Configuration
//
// See Config: urls, index, text_fields, content_field, vector_field,
// title_field, uri_field, writable, refresh, username+password | bearer |
// aws, ca_file, timeout, rerank_model, rerank_max_candidates.
//
// # Native rerank
//
// With rerank_model, the probe runs that ml-commons model's start-up
// check and reports it as Evidence.NativeReranker (its failure as the
// reason nothing is advertised); NativeRerank (rerank.go) calls the
// model's _predict API. Without a sidecar reranker section the Engine
// serves the rerank method and retrieve's rerank stage with it, through
// that call on the hits' texts (Evidence.NativeRerankStage stays false:
// no reranking inside the search). See engines.md §3.7.
//
// # AWS
//
// With aws (region, service es or aoss, optional profile) every request is
// signed with AWS Signature Version 4 by opensearch-go's signer/awsv2 over
// the AWS SDK for Go v2, with credentials from the SDK's standard chain
// (environment, shared files, web identity/IRSA, container, instance
// role); see sigv4.go. With service aoss (OpenSearch Serverless) the probe
// skips GET /, _cat/plugins, _search/pipeline and _cluster/settings, which
// Serverless does not serve: the version and plugins are unknown, so
// native hybrid and engine MMR are not offered and the evidence says so.
//
// # Known differences
//
// The k-NN plugin zip published on Maven Central has no native libraries:
// on such a node only `"engine": "lucene"` fields work, and indexing into a
// faiss or nmslib field kills the node (UnsatisfiedLinkError). The adapter
// reads faiss and nmslib mappings all the same (nmslib index creation is
// refused from 3.0). Filters follow dslfilter.Analyze: OpenSearch does not
// record values dropped by ignore_above in _ignored, so exists is not
// offered on such fields. Document ids longer
// than 512 bytes are rejected by the engine (-32602).
package opensearch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/tenantidx"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
)

// Name is the engine name in the configuration.
const Name = "opensearch"

// Factory registers the OpenSearch adapter.
var Factory = adapters.Factory{
	Name:          Name,
	NewConfig:     func() adapters.Config { return DefaultConfig() },
	Open:          adapters.Validating(open),
	TenantIndices: true,
}

var (
	_ adapters.Adapter = (*adapter)(nil)
	_ adapters.Writer  = (*adapter)(nil)
)

// adapter is one OpenSearch target. The probe result is kept so that Plan
// (pure) knows each vector field's space and engine.
type adapter struct {
	cfg  *Config
	http *client
	log  *slog.Logger

	mu     sync.RWMutex
	schema *schema
	// raw are the last probe's responses (tenant schemas reuse the
	// cluster-level ones).
	raw atomic.Pointer[probeResponses]

	// tenancy, when set, keeps each tenant in an index of its own
	// (tenants.go); tenants are their indices by name.
	tenancy *adapters.TenantIndex
	tenants *tenantidx.Set[schema]

	// ml is the rerank_model (rerank.go), nil when none is configured.
	ml *mlReranker
}

func open(ctx context.Context, c adapters.Config, d adapters.Deps) (adapters.Adapter, error) {
	cfg, ok := c.(*Config)
	if !ok {
		return nil, fmt.Errorf("opensearch: config of type %T", c)
	}
	if ti := d.TenantIndex; ti != nil {
		if err := adapters.ValidateTenantTemplate(ti.Template); err != nil {
			return nil, fmt.Errorf("opensearch: %w", err)
		}
		if err := adapters.ValidateTenantMapping(ti.Mapping); err != nil {
			return nil, fmt.Errorf("opensearch: %w", err)
		}
	}
	cl, err := newClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &adapter{cfg: cfg, http: cl, log: log.With("engine", Name), tenancy: d.TenantIndex, ml: newMLReranker(cfg, cl)}
	a.tenants = tenantidx.New(Name, d.TenantIndex, cfg.Index, a.probeTenant)
	return a, nil
}

// Close implements adapters.Adapter.
func (a *adapter) Close() error { return a.http.close() }

// current returns the probed schema, or nil before the first Probe.
func (a *adapter) current() *schema {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.schema
}

func (a *adapter) setSchema(s *schema) {
	a.mu.Lock()
	a.schema = s
	a.mu.Unlock()
}

// evidence returns the capability evidence of the current schema.
func (a *adapter) evidence() *capability.Evidence {
	if s := a.current(); s != nil {
		return s.ev
	}
	return nil
}
