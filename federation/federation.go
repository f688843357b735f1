// Package federation is an RCP aggregator (§16): a server.Backend that fans
// a retrieve out to several engine Backends concurrently, fuses their
// ranked lists (RRF, or convex when every participant advertises
// scoreFloor; §16.3), tags each hit with its origin, and reports skipped or
// failed engines. It also answers catalog/list (§7.13) and provides an HTTP
// downstream Backend so a federation may include another sidecar.
//
// Identity and deduplication: hit ids are kept as the engine returned them.
// Two hits collapse into one fused hit only when they come from the same
// engine id with the same stringified id (§16.3 allows keying per engine
// when id spaces differ); the same id from two engines yields two hits,
// told apart by meta.engine.
package federation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultDepth   = 3                    // §16.2 RECOMMENDED hop budget
	DefaultReserve = 5 * time.Millisecond // kept back from downstream deadlines for fusion
)

// Engine is one federated engine: a registry entry (§16.1).
type Engine struct {
	// ID tags the engine's hits (meta.engine) and names it in notes.
	ID string
	// Backend serves the engine: an in-process engine or an HTTPBackend.
	Backend server.Backend
	// Weight scales the engine's fusion contribution; 0 means 1.0.
	Weight float64
	// Required makes a failure of this engine fail the whole query.
	Required bool
	// Identity is the name the engine appends to _meta.federation.path when
	// it federates itself; an engine whose Identity is already on the
	// incoming path is skipped as a cycle (§16.2). Empty: never matched.
	Identity string
	// Forwards marks an engine that federates further (another
	// aggregator), so the hop budget and path apply to it (§16.2). It is
	// implied for *HTTPBackend and *Aggregator; set it for such a backend
	// behind a wrapper.
	Forwards bool
	// Ready, when set, reports whether the engine can serve now: while it
	// returns an error the engine is skipped as unavailable (-32010 in
	// _meta.degraded), e.g. a backend still unreachable since start-up.
	// Not for Required engines.
	Ready func() error
}

// Options configure an Aggregator.
type Options struct {
	// Name and Version identify the aggregator (initialize.result.server).
	Name, Version string
	// Identity is what the aggregator appends to _meta.federation.path;
	// it must be unique among federating peers. Empty: Name.
	Identity string
	// Depth is the hop budget assumed when a request carries none.
	Depth int
	// Reserve is subtracted from the remaining deadline before it is
	// handed downstream (§16.2 budget propagation).
	Reserve time.Duration
	// Allow, when set, reports whether the caller in ctx may use engine id;
	// engines it refuses are neither queried nor listed. Nil allows all.
	Allow func(ctx context.Context, id string) bool
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Aggregator federates Engines; it implements server.Backend. Its
// capability set is computed once, at New, and never changes (§13.2).
type Aggregator struct {
	engines   []Engine
	opts      Options
	caps      rcp.Capabilities
	conflicts []string
	log       *slog.Logger
}

var _ server.Backend = (*Aggregator)(nil)

// New builds an Aggregator over engines, whose ids must be unique and
// non-empty and whose weights must be finite and non-negative.
func New(engines []Engine, opts Options) (*Aggregator, error) {
	if len(engines) == 0 {
		return nil, errors.New("federation: no engines")
	}
	es := make([]Engine, len(engines))
	seen := map[string]bool{}
	for i, e := range engines {
		if err := checkEngine(e, seen); err != nil {
			return nil, err
		}
		if e.Weight == 0 {
			e.Weight = 1
		}
		es[i] = e
	}
	a := &Aggregator{engines: es, opts: withDefaults(opts), log: opts.Logger}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.caps, a.conflicts = unionCaps(es)
	for _, c := range a.conflicts {
		a.log.Warn("federation: filter field not advertised", "reason", c)
	}
	return a, nil
}

func checkEngine(e Engine, seen map[string]bool) error {
	switch {
	case e.ID == "":
		return errors.New("federation: engine with empty id")
	case seen[e.ID]:
		return fmt.Errorf("federation: duplicate engine id %q", e.ID)
	case e.Backend == nil:
		return fmt.Errorf("federation: engine %q has no backend", e.ID)
	case e.Required && e.Ready != nil:
		return fmt.Errorf("federation: engine %q: a required engine cannot be deferred (Ready)", e.ID)
	case e.Weight < 0 || math.IsNaN(e.Weight) || math.IsInf(e.Weight, 0):
		return fmt.Errorf("federation: engine %q: weight must be a finite number ≥ 0", e.ID)
	}
	seen[e.ID] = true
	return nil
}

func withDefaults(o Options) Options {
	if o.Name == "" {
		o.Name = "rcp-federation"
	}
	if o.Identity == "" {
		o.Identity = o.Name
	}
	if o.Depth <= 0 {
		o.Depth = DefaultDepth
	}
	if o.Reserve <= 0 {
		o.Reserve = DefaultReserve
	}
	return o
}

// Info identifies the aggregator.
func (a *Aggregator) Info() rcp.PeerInfo {
	return rcp.PeerInfo{Name: a.opts.Name, Version: a.opts.Version}
}

// Capabilities is the fixed federated capability set (§16.4, §13.2).
func (a *Aggregator) Capabilities() rcp.Capabilities { return a.caps }

// Conflicts lists the filter fields left out of the advertised set because
// engines disagree on their type or float precision, one human-readable
// line each.
func (a *Aggregator) Conflicts() []string { return append([]string(nil), a.conflicts...) }

// Identity is the name the aggregator appends to _meta.federation.path.
func (a *Aggregator) Identity() string { return a.opts.Identity }

// Engines returns the federated engines in configuration order.
func (a *Aggregator) Engines() []Engine { return append([]Engine(nil), a.engines...) }

// Conformance is the lowest level any engine proves ("L0" when unsure):
// fusion adds no conformance of its own.
func (a *Aggregator) Conformance() string {
	level := ""
	for _, e := range a.engines {
		if l := e.Backend.Conformance(); level == "" || l < level {
			level = l
		}
	}
	if level == "" {
		return "L0"
	}
	return level
}

// Embed is not federated: embedding identities differ between engines.
func (a *Aggregator) Embed(context.Context, *rcp.EmbedParams) (*rcp.EmbedResult, error) {
	return nil, rcp.NewError(rcp.CodeCapabilityMissing, "embed is not federated")
}

// IndexAdd is not federated: write to an engine at /engines/<id>/rcp.
func (a *Aggregator) IndexAdd(context.Context, *rcp.IndexAddParams) (*rcp.IndexAddResult, error) {
	return nil, rcp.NewError(rcp.CodeCapabilityMissing, "index/add is not federated")
}

// IndexDelete is not federated: delete at the engine's own endpoint.
func (a *Aggregator) IndexDelete(context.Context, *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error) {
	return nil, rcp.NewError(rcp.CodeCapabilityMissing, "index/delete is not federated")
}

// allowed applies Options.Allow.
func (a *Aggregator) allowed(ctx context.Context, id string) bool {
	return a.opts.Allow == nil || a.opts.Allow(ctx, id)
}
