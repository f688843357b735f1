package retrieval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Options configure an Engine.
type Options struct {
	// Name and Version identify the server (initialize.result.server).
	Name, Version string
	// Policy narrows the derived capabilities. EmbedDim and EmbedIdentity
	// are taken from Embedder when it is set, and forced to zero when not.
	Policy capability.Policy
	// Embedder embeds queries (dense stages), embed inputs and documents
	// written by index/add. Nil means no embedder.
	Embedder adapters.Embedder
	// Logger receives engine-side error text, never sent to clients (§15).
	Logger *slog.Logger
	// CursorKeys root the keys that authenticate pagination cursors and
	// pinned indexVersion tokens (derived with a label of the engine's
	// own, so the same keys may root other uses): the first seals, every
	// one opens (key rotation). Random when empty: tokens then open only
	// in this process.
	CursorKeys [][]byte
	// Tenancy is the backend's multi-tenancy policy (index isolation and
	// the checks on tenants' writes).
	Tenancy Tenancy
	// Reranker serves the rerank method and the retrieve rerank stage; nil
	// means none. Policy.Reranker must describe it (a start-up check's
	// facts); either without the other advertises nothing.
	Reranker Reranker
	// Sessions remembers what each session was served (§7.7.3); nil means
	// sessionId is ignored. Policy.Session describes it.
	Sessions SessionStore
	// Feedback receives feedback signals (§7.16); nil means feedback is
	// not served. Policy.Feedback must be set with it.
	Feedback FeedbackSink
	// Caller names the caller of a request (its API key), for namespacing
	// sessions and tagging feedback; nil or "" is the anonymous caller.
	Caller func(ctx context.Context) string
}

// Engine is the portable RCP layer over one Adapter. It implements
// server.Backend: gating, funnel clamp, stage planning, sidecar fusion,
// MMR and packing, score labels, usage and error mapping happen here once
// for every engine. Its capability set is fixed at NewEngine (§13.2).
// Engine is safe for concurrent use.
type Engine struct {
	a       adapters.Adapter
	opts    Options
	policy  capability.Policy
	ev      *capability.Evidence
	caps    rcp.Capabilities
	reasons []Reason
	fields  map[string]filterlang.FieldType
	ops     []filterlang.Op
	// fieldOps are the operators each advertised field serves (§8).
	fieldOps map[string][]filterlang.Op
	dense    *capability.VectorField
	log      *slog.Logger
	// known is the target's mapping as probed and grown by writes.
	known *knownFields
	// nativeRR: the reranker is the engine's own (Evidence.NativeReranker),
	// reached through the adapter.
	nativeRR bool
	// keys seal and open cursors and indexVersion tokens.
	keys rankmath.CursorKeys
}

// Reason is capability.Reason, re-exported for callers of Explain.
type Reason = capability.Reason

// NewEngine probes a once and derives the capability set that the Engine
// then serves for its whole lifetime (§13.2: a backend lost later yields
// -32010, never a narrower capability set).
func NewEngine(ctx context.Context, a adapters.Adapter, opts Options) (*Engine, error) {
	if a == nil {
		return nil, errors.New("adapters: nil adapter")
	}
	ev, err := a.Probe(ctx)
	if err != nil {
		return nil, fmt.Errorf("adapters: probe: %w", err)
	}
	if opts.Tenancy.Index && !ev.TenantIndices {
		return nil, fmt.Errorf("adapters: %s cannot keep each tenant in an index of its own (tenancy mode index)", ev.Engine)
	}
	e := &Engine{a: a, opts: opts, ev: ev, log: opts.Logger, known: newKnownFields(ev.MappedFields)}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if err := e.initKey(); err != nil {
		return nil, err
	}
	e.policy = extrasPolicy(embedPolicy(opts.Policy, opts.Embedder), opts).WithDefaults()
	ev = e.useNativeReranker(ev)
	e.caps, e.reasons = capability.Derive(ev, e.policy)
	e.dense = capability.DenseField(ev, e.policy)
	e.indexFilter()
	return e, nil
}

func (e *Engine) initKey() error {
	if len(e.opts.CursorKeys) > 0 {
		e.keys = rankmath.CursorKeys(e.opts.CursorKeys).Derive("rcp-sidecar engine cursor")
		return nil
	}
	ks, err := rankmath.RandomCursorKeys()
	if err != nil {
		return fmt.Errorf("adapters: cursor key: %w", err)
	}
	e.keys = ks
	return nil
}

// embedPolicy makes the policy's embedder facts agree with the embedder
// actually configured: dense is advertised only when it can be served.
func embedPolicy(p capability.Policy, emb adapters.Embedder) capability.Policy {
	if emb == nil {
		p.EmbedDim, p.EmbedIdentity, p.EmbedElement = 0, "", ""
		return p
	}
	p.EmbedDim, p.EmbedElement = emb.Dimension(), adapters.ElementOf(emb)
	if p.EmbedIdentity == "" {
		p.EmbedIdentity = emb.Identity()
	}
	return p
}

func (e *Engine) indexFilter() {
	if e.caps.Filter == nil {
		return
	}
	e.fields = make(map[string]filterlang.FieldType, len(e.caps.Filter.Fields))
	for name, t := range e.caps.Filter.Fields {
		e.fields[name] = filterlang.FieldType(t)
	}
	for _, op := range e.caps.Filter.Operators {
		e.ops = append(e.ops, filterlang.Op(op))
	}
	e.fieldOps = make(map[string][]filterlang.Op, len(e.fields))
	for _, ff := range e.ev.FilterFields {
		if _, adv := e.fields[ff.Name]; adv && e.fieldOps[ff.Name] == nil {
			e.fieldOps[ff.Name] = capability.FieldOps(ff, e.policy)
		}
	}
}

// FieldOps returns the operators retrieve accepts on the advertised filter
// field named field: those its evidence proves exact (FilterField.Ops, or
// the §8 table for its type) narrowed by policy. Nil when the field is not
// advertised. Any other operator on the field is -32602 on "filter.<field>".
func (e *Engine) FieldOps(field string) []filterlang.Op { return slices.Clone(e.fieldOps[field]) }

// Info identifies the server.
func (e *Engine) Info() rcp.PeerInfo { return rcp.PeerInfo{Name: e.opts.Name, Version: e.opts.Version} }

// Capabilities returns the fixed capability set (§13.2).
func (e *Engine) Capabilities() rcp.Capabilities { return e.caps }

// Evidence returns what the probe proved.
func (e *Engine) Evidence() *capability.Evidence { return e.ev }

// Explain returns the reason behind every capability decision.
func (e *Engine) Explain() []capability.Reason { return slices.Clone(e.reasons) }

// Close releases the adapter.
func (e *Engine) Close() error { return e.a.Close() }

// Conformance is the level the capability set honestly supports (§14),
// computed by capability.Conformance from what this Engine advertises.
func (e *Engine) Conformance() string { return capability.Conformance(e.caps) }

func (e *Engine) hasMode(m rcp.Mode) bool {
	return e.caps.Retrieve != nil && slices.Contains(e.caps.Retrieve.Modes, m)
}

func (e *Engine) hasFusion(f rcp.FusionMethod) bool {
	return e.caps.Retrieve != nil && slices.Contains(e.caps.Retrieve.Fusion, f)
}

func (e *Engine) hasEncoding(enc string) bool {
	return e.caps.Embed != nil && slices.Contains(e.caps.Embed.Encodings, enc)
}

// Retrieve runs the §7.7 pipeline as named steps: gate, clamp, recall,
// fuse, diversify, filter by minScore, page and pack, label.
func (e *Engine) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	start := time.Now()
	if e.caps.Retrieve == nil {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "retrieve is not advertised")
	}
	tenant, terr := e.tenantOf(ctx, false)
	if terr != nil {
		return nil, terr
	}
	r, gerr := e.gate(p, tenant)
	if gerr != nil {
		return nil, gerr
	}
	if err := e.clamp(r); err != nil {
		return nil, err
	}
	if err := e.openCursor(r); err != nil {
		return nil, err
	}
	rk, err := e.recallAndRank(ctx, r)
	if err != nil {
		return nil, e.wrap(ctx, err)
	}
	rk.items = minScore(r, rk.items)
	return e.finish(ctx, r, rk, start)
}
