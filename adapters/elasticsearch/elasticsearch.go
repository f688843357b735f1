// Package elasticsearch is the RCP adapter for Elasticsearch 8.x/9.x.
//
// # Probe
//
// Read-only calls: GET / (version, build flavour, X-Elastic-Product; when the
// root endpoint is absent, as in the integ-test distribution, GET
// /_nodes/_local), GET /_license, GET /_nodes/_local/plugins (modules such
// as rank-rrf), GET /<target>/_mapping (every concrete index behind an
// alias or pattern), GET /<target>/_count and, when an inference module is
// installed, GET /_inference/_all; GET /_inference/rerank/_all for the
// engine's reranker.
//
// # Capabilities
//
//   - sparse: at least one searchable text field (or the configured ones).
//   - dense: an indexed float dense_vector field, or a byte one for an int8
//     embedder (bit fields are left out with a note); the query is embedded
//     by the sidecar's embedder (dims must match, decided by Derive).
//   - NativeRRF: only when the rank-rrf module is installed and the licence
//     is enterprise or trial; otherwise the sidecar fuses.
//   - filter fields: keyword/numeric/date/boolean/geo_point fields, and
//     text fields through an exact keyword sub-field, each with the §8
//     operators the mapping answers exactly (dslfilter.Analyze: ignore_above,
//     normalizer, null_value, stored precision, …); values dropped by
//     ignore_above stay visible to exists through _ignored. Fields whose
//     mappings differ across the indices behind an alias are dropped and
//     reported in Evidence.Notes.
//   - pagination: sparse and dense pages run under a point in time (POST
//     /<index>/_pit, keep-alive pit_keep_alive, default 1m) opened with the
//     first page, sorted [_score, _shard_doc] and continued with
//     search_after, so writes between pages shift nothing; the PIT is
//     closed after the last page, otherwise it lapses after its keep-alive.
//     Opt-in with pit: true, because every first sparse/dense page then
//     opens one (a request cannot say it will page): one extra round trip,
//     and an open search context until the keep-alive lapses when more
//     results remain. Without it, and always for fused hybrid, MMR and
//     unit document (collapse forbids search_after with two sort keys),
//     pages are offsets.
//   - snapshots: indexVersion is the (sealed) PIT id on PIT-served pages; a
//     pinned one is searched as is, and -32010 once it has lapsed or was
//     closed. Pinned PITs are never closed by the adapter.
//   - recency: lexical only. The multi_match is wrapped in function_score
//     with an exp decay on the date field (origin now, scale = halfLifeDays,
//     offset 0, decay 0.5, multiplied), so the score halves per half-life;
//     documents without the field keep multiplier 1 (ES decay semantics).
//     Scores are then labelled unbounded with floor 0. A kNN section cannot
//     be rescored exactly, so dense (and sidecar-fused hybrid) recency is
//     -32005 on option "recency"; with strict:false dense runs without it
//     and hybrid applies it to the sparse list (both noted, Evidence
//     RecencyLexicalOnly). Paginated pages fix the origin at the
//     first page's clock so scores do not drift between pages.
//   - units: chunk and document when document_id_field names an indexed
//     keyword field: unit document collapses on it (lexical and kNN; kNN
//     collapses its k nearest chunks, so fewer than k documents can come
//     back).
//   - rerank (rerank.go, engines.md §2.9): without a sidecar reranker, the
//     engine's own when GET /_inference/rerank/_all lists an endpoint of
//     task_type rerank (the only one, or rerank_inference_id), the
//     licence is enterprise or trial and the endpoint passes the start-up
//     check (once per endpoint). The rerank method posts to
//     /_inference/rerank/<id>; retrieve's rerank stage, when the Engine
//     allows it, wraps the stage in a text_similarity_reranker retriever
//     (window = topN, field = the content field) and labels the scores
//     unbounded with no floor. A licence refused later is -32005 on option
//     "rerank", a deleted endpoint -32010.
//   - deterministic: when no index behind the target has replicas.
//   - writes: only when the config says writable and the target is one
//     index or an alias (not a pattern). A document that would grow the
//     mapping past one of its limits is -32602 on documents[i].meta naming
//     the setting.
//   - tenancy mode index (Deps.TenantIndex, tenants.go): each tenant in
//     an index of its own, created from the configured body on its first
//     write and probed; capabilities come from that body instead of GET
//     /<target>/_mapping, and the target (a pattern such as docs-* is
//     fine) is what callers without a tenant read.
//
// # Emulated
//
// Hybrid fusion, MMR and token packing run in the sidecar unless
// NativeRRF holds.
//
// # Scores
//
// sparse: BM25 `_score` (scale bm25, floor 0). dense: ES kNN `_score` is
// inverted to the native similarity: cosine and float dot_product 2s−1
// (floor −1 for cosine), byte dot_product (s−0.5)·32768·dims,
// max_inner_product s<1 ? 1−1/s : s−1, l2_norm keeps 1/(1+d²).
//
// # Configuration
//
// See Config: urls, index, text_fields, vector_field, writable, refresh,
// document_id_field, pit, pit_keep_alive, highlight, meta_fields,
// disable_compression, timeout,
// api_key | username+password | bearer, ca_file | ca_fingerprint.
//
// # Known differences
//
// A keyword sub-field ignores values longer than its ignore_above, which
// text-field filters then do not see (reported in Evidence.Notes). The
// integ-test distribution has no root endpoint (GET / is 405), no
// analysis-common (no language analyzers) and no rank-rrf.
package elasticsearch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	es8 "github.com/elastic/go-elasticsearch/v8"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eshttp"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/tenantidx"
	"github.com/rcp-sidecar/rcp-sidecar/internal/h1"
)

// Name is the engine name in configuration files.
const Name = "elasticsearch"

// Factory registers the adapter in an adapters.Registry.
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

// adapter implements adapters.Adapter and adapters.Writer. It is safe for
// concurrent use; the probe result is swapped in under mu.
type adapter struct {
	cfg    *Config
	client *es8.Client
	http   *h1.Transport
	log    *slog.Logger

	mu    sync.RWMutex
	state *probeState
	// facts are the cluster facts of the last probe.
	facts atomic.Pointer[facts]

	// tenancy, when set, keeps each tenant in an index of its own
	// (tenants.go); tenants are their indices by name.
	tenancy *adapters.TenantIndex
	tenants *tenantidx.Set[probeState]

	// rerankChecked holds the inference endpoints whose start-up check
	// passed (rerank.go).
	rerankChecked sync.Map
}

func open(_ context.Context, c adapters.Config, d adapters.Deps) (adapters.Adapter, error) {
	cfg, ok := c.(*Config)
	if !ok {
		return nil, fmt.Errorf("elasticsearch: config is %T, want *elasticsearch.Config", c)
	}
	if ti := d.TenantIndex; ti != nil {
		if err := adapters.ValidateTenantTemplate(ti.Template); err != nil {
			return nil, fmt.Errorf("elasticsearch: %w", err)
		}
		if err := adapters.ValidateTenantMapping(ti.Mapping); err != nil {
			return nil, fmt.Errorf("elasticsearch: %w", err)
		}
	}
	t, err := transport(cfg)
	if err != nil {
		return nil, err
	}
	client, err := newClient(cfg, t)
	if err != nil {
		return nil, err
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &adapter{cfg: cfg, client: client, http: t, log: log.With("engine", Name), tenancy: d.TenantIndex}
	a.tenants = tenantidx.New(Name, d.TenantIndex, cfg.Index, a.probeTenant)
	return a, nil
}

// newClient builds the vendor client with outbound auth over t.
func newClient(cfg *Config, t http.RoundTripper) (*es8.Client, error) {
	return es8.NewClient(es8.Config{
		Addresses:    cfg.URLs,
		APIKey:       string(cfg.APIKey),
		Username:     cfg.Username,
		Password:     string(cfg.Password),
		ServiceToken: string(cfg.Bearer),
		Transport:    t,
		DisableRetry: true, // the Engine and its caller own retries (§12.2)
	})
}

// transport is a pooled HTTP transport sized for concurrent retrieval,
// trusting the CA file or the pinned fingerprint when one is set.
func transport(cfg *Config) (*h1.Transport, error) {
	tc, err := eshttp.TLSConfig(Name, cfg.CAFile, cfg.CAFingerprint)
	if err != nil {
		return nil, err
	}
	return eshttp.Transport(cfg.Timeout, cfg.DisableCompression, tc), nil
}

// probed returns the last probe state or an error before the first probe.
func (a *adapter) probed() (*probeState, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.state == nil {
		return nil, errNotProbed
	}
	return a.state, nil
}

var errNotProbed = errors.New("elasticsearch: Plan before Probe")

// Close implements adapters.Adapter.
func (a *adapter) Close() error {
	a.http.CloseIdleConnections()
	return nil
}
