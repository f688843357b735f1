package sidecar

import (
	"context"
	"sync"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/internal/feedback"
	"github.com/rcp-sidecar/rcp-sidecar/internal/session"
	"github.com/rcp-sidecar/rcp-sidecar/reranker"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// extrasState is the app's reranker, opened and checked once for every
// backend it serves.
type extrasState struct {
	once  sync.Once
	rr    *reranker.Client
	facts *capability.RerankerFacts
}

// rerankCheckTimeout bounds the reranker's start-up check.
const rerankCheckTimeout = 30 * time.Second

// callerOf names the caller of a request by its API key id ("" without
// authentication, or over stdio): sessions and feedback are namespaced and
// tagged with it.
func callerOf(ctx context.Context) string {
	if p := access.FromContext(ctx); p != nil {
		return p.ID()
	}
	return ""
}

// applyExtras gives the Engine of backend the configured reranker (when
// its start-up check passed), a session store of its own (over the shared
// state store when one is configured) and a feedback sink, and the facts
// capability.Derive advertises them from.
func (a *Sidecar) applyExtras(ctx context.Context, o *retrieval.Options, backend string) error {
	o.Caller = callerOf
	if rr, facts := a.reranker(ctx); facts != nil {
		o.Policy.Reranker = facts
		if rr != nil {
			o.Reranker = rr
		}
	}
	if s := a.cfg.Session; s != nil {
		d := s.WithDefaults()
		shared, err := a.sharedSessions()
		if err != nil {
			return err
		}
		local := session.New(session.Options{TTL: time.Duration(d.TTLSeconds) * time.Second, MaxSessions: d.MaxSessions, MaxKeys: d.MaxIDs})
		o.Sessions = session.NewTiered(local, shared, backend)
		o.Policy.Session = &capability.SessionFacts{Dedup: d.DedupOn(), TTLSeconds: d.TTLSeconds, MaxSessions: d.MaxSessions, MaxIDs: d.MaxIDs}
	}
	if f := a.cfg.Feedback; f != nil && f.Enabled {
		fo := feedback.Options{Engine: backend, Logger: a.log.With("backend", backend), LogBodies: f.LogQueries}
		if !a.cfg.Telemetry.Disabled {
			fo.Meter = a.tel().Meter()
		}
		if ix := f.Index; ix != nil {
			fo.Index = &feedback.IndexOptions{URL: ix.URL, Index: ix.Index, Username: ix.Username, Password: ix.Password.Reveal(),
				APIKey: ix.APIKey.Reveal(), Bearer: ix.Bearer.Reveal(), Timeout: ix.Timeout}
		}
		sink, err := feedback.New(fo)
		if err != nil {
			return err
		}
		o.Feedback, o.Policy.Feedback = sink, true
	}
	return nil
}

// reranker opens the reranker section once and runs its start-up check:
// a reranker that fails it is not advertised (probe says why), and the
// sidecar serves without it.
func (a *Sidecar) reranker(ctx context.Context) (*reranker.Client, *capability.RerankerFacts) {
	x := &a.extras
	x.once.Do(func() {
		rc := a.cfg.Reranker
		if rc == nil {
			return
		}
		c, err := reranker.New(reranker.Options{BaseURL: rc.URL, API: reranker.API(rc.API), Model: rc.Model, APIKey: rc.APIKey.Reveal(),
			MaxCandidates: rc.MaxCandidates, Timeout: rc.Timeout, Retries: rc.Retries})
		if err != nil {
			x.facts = &capability.RerankerFacts{Method: "cross-encoder", Failed: err.Error()}
			a.log.Warn("reranker not advertised", "err", err)
			return
		}
		cctx, cancel := context.WithTimeout(ctx, rerankCheckTimeout)
		defer cancel()
		proof, err := c.Check(cctx)
		x.facts = &capability.RerankerFacts{Method: c.Method(), Models: c.Models(), MaxCandidates: c.MaxCandidates(), Proof: proof}
		if err != nil {
			x.facts.Failed = err.Error()
			a.log.Warn("reranker not advertised: its start-up check failed", "err", err)
			return
		}
		x.rr = c
	})
	return x.rr, x.facts
}

// demoExtras turns on what the demo shows when the configuration leaves
// it out: session dedup with the default bounds, and feedback (logged).
func (a *Sidecar) demoExtras() {
	if a.cfg.Session == nil {
		a.cfg.Session = &config.Session{}
	}
	if a.cfg.Feedback == nil {
		a.cfg.Feedback = &config.Feedback{Enabled: true}
	}
}
