package resilient_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/adaptertest"
	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// switchable is the real in-process memory engine behind a FAKE network:
// while down, every call fails as a connection the engine dropped
// (ECONNRESET, which the decorator classifies -32010); while up, every
// call takes latency, as a round trip to a networked engine does, so the
// two stage calls of a hybrid retrieve overlap in time as they do against
// Elasticsearch. With native set it is a FAKE native-RRF engine: it claims
// native fusion and answers the hybrid stage with one lexical search.
type switchable struct {
	adapters.Adapter
	w       adapters.Writer
	native  bool
	latency time.Duration
	down    atomic.Bool
	calls   atomic.Int64
}

var errDropped = fmt.Errorf("engine dropped the connection: %w", syscall.ECONNRESET)

func (s *switchable) wait(ctx context.Context) error {
	s.calls.Add(1)
	if s.down.Load() {
		return errDropped
	}
	t := time.NewTimer(s.latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *switchable) Probe(ctx context.Context) (*capability.Evidence, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	ev, err := s.Adapter.Probe(ctx)
	if err == nil && s.native {
		ev.NativeRRF = true
	}
	return ev, err
}

func (s *switchable) Plan(req *adapters.SearchRequest) (*adapters.Plan, error) {
	if s.native && req.Stage == adapters.StageHybrid {
		lex := *req
		lex.Stage = adapters.StageLexical
		return s.Adapter.Plan(&lex)
	}
	return s.Adapter.Plan(req)
}

func (s *switchable) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Adapter.Search(ctx, p)
}

// newSwitchable returns a memory engine with three documents, 8-d vectors
// from the FAKE embedder, behind the switch.
func newSwitchable(t *testing.T, native bool) *switchable {
	t.Helper()
	st := memory.New(memory.Options{Dims: 8})
	emb := adaptertest.Embedder()
	texts := []string{"comets grow tails near the sun", "search engines rank documents", "the sun is a star"}
	vecs, err := emb.Embed(context.Background(), texts, "document")
	if err != nil {
		t.Fatal(err)
	}
	for i, txt := range texts {
		st.Add(adapters.Document{ID: fmt.Sprintf("d%d", i), Text: txt, Vector: vecs[i]})
	}
	return &switchable{Adapter: st, native: native, latency: 20 * time.Millisecond}
}

// breakerOptions open the circuit after two failures for 300ms.
func breakerOptions() resilient.Options {
	return resilient.Options{Name: "docs", Retries: -1, FailureThreshold: 2, OpenFor: 300 * time.Millisecond,
		Timeout: 5 * time.Second, ReprobeInterval: time.Hour}
}

func newEngine(t *testing.T, a adapters.Adapter) *retrieval.Engine {
	t.Helper()
	e, err := retrieval.NewEngine(context.Background(), a, retrieval.Options{
		Name: "t", Version: "0", Embedder: adaptertest.Embedder(),
		Policy: capability.Policy{MaxK: 10, DefaultCandidateK: 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func retrieveParams(mode rcp.Mode) *rcp.RetrieveParams {
	k := int64(2)
	return &rcp.RetrieveParams{Query: rcp.TextQuery("sun"), K: &k, Mode: mode}
}

// TestHostileBreakerRecoversAfterRestart: the engine is killed under
// traffic, the breaker opens, the engine comes back. Attack: only hybrid
// requests arrive, whose two concurrent stage calls raced for the single
// half-open trial; the refused one cancelled the admitted one, which was
// then counted as the caller giving up, so the breaker stayed half-open
// and answered -32010 forever. Guarantee: in every retrieve mode, and
// through federation, the first request after the open period is the
// trial, and the breaker closes within a few requests of the restart.
func TestHostileBreakerRecoversAfterRestart(t *testing.T) {
	cases := []struct {
		name   string
		mode   rcp.Mode
		native bool
		fed    bool
	}{
		{"sparse", rcp.ModeSparse, false, false},
		{"dense", rcp.ModeDense, false, false},
		{"hybrid sidecar fusion", rcp.ModeHybrid, false, false},
		{"hybrid native", rcp.ModeHybrid, true, false},
		{"federation hybrid", rcp.ModeHybrid, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sw := newSwitchable(t, tc.native)
			ra := resilient.New(sw, breakerOptions())
			var b server.Backend = newEngine(t, ra.AsAdapter())
			if tc.fed {
				other := newEngine(t, newSwitchable(t, false))
				agg, err := federation.New([]federation.Engine{
					{ID: "docs", Backend: b, Weight: 1}, {ID: "other", Backend: other, Weight: 1},
				}, federation.Options{Name: "fed"})
				if err != nil {
					t.Fatal(err)
				}
				b = agg
			}
			p := retrieveParams(tc.mode)
			retrieve := func() (*rcp.RetrieveResult, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				return b.Retrieve(ctx, p)
			}
			if _, err := retrieve(); err != nil {
				t.Fatalf("retrieve with the engine up: %v", err)
			}
			if tc.native && sw.calls.Load() != 2 { // probe + one native call
				t.Fatalf("engine calls = %d, want one native hybrid call after the probe", sw.calls.Load())
			}

			sw.down.Store(true)
			for i := 0; ra.State() != resilient.StateOpen; i++ {
				if i == 20 {
					t.Fatalf("breaker %s after 20 requests to a dead engine, want open", ra.State())
				}
				_, _ = retrieve()
			}

			sw.down.Store(false)
			restored := time.Now()
			var requests int
			var last error
			for ra.State() != resilient.StateClosed {
				if requests == 100 || time.Since(restored) > 10*time.Second {
					t.Fatalf("breaker %s %v after the restart (%d requests, last error %v), want closed",
						ra.State(), time.Since(restored).Round(time.Millisecond), requests, last)
				}
				requests++
				res, err := retrieve()
				last = err
				if err == nil && tc.fed && len(res.Meta) > 0 {
					last = fmt.Errorf("degraded: %v", res.Meta)
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Logf("%s: breaker closed %v after the restart (open period 300ms), after %d requests",
				tc.name, time.Since(restored).Round(time.Millisecond), requests)
			res, err := retrieve()
			if err != nil || len(res.Hits) == 0 || (tc.fed && len(res.Meta) > 0) {
				t.Fatalf("retrieve once closed: %+v, %v", res, err)
			}
		})
	}
}

// TestHostileHalfOpenAdmitsWholeCallGroup: the half-open trial admits
// every call of its request's call group and no other call, and the
// group's first verdict decides it.
func TestHostileHalfOpenAdmitsWholeCallGroup(t *testing.T) {
	sw := newSwitchable(t, false)
	ra := resilient.New(sw, breakerOptions())
	search := func(ctx context.Context) error {
		_, err := ra.Search(ctx, &adapters.Plan{Adapter: "none"})
		return err
	}
	sw.down.Store(true)
	for range 2 {
		_ = search(context.Background())
	}
	if s := ra.State(); s != resilient.StateOpen {
		t.Fatalf("state = %s, want open", s)
	}
	time.Sleep(350 * time.Millisecond)
	sw.down.Store(false)
	sw.latency = 300 * time.Millisecond // the trial is in flight for a while
	group := adapters.WithCallGroup(context.Background())
	errs := make(chan error, 2)
	go func() { errs <- search(group) }()
	time.Sleep(100 * time.Millisecond)
	var open *resilient.Error
	if err := search(context.Background()); !errors.As(err, &open) || open.Code != rcp.CodeBackendUnavailable {
		t.Errorf("a lone call during the trial: %v, want -32010", err)
	}
	go func() { errs <- search(group) }() // a sibling of the trial joins it
	for range 2 {
		if err := <-errs; errors.As(err, &open) {
			t.Errorf("a call of the trial's group was refused: %v", err)
		}
	}
	if s := ra.State(); s != resilient.StateClosed {
		t.Errorf("state after the group's trial = %s, want closed", s)
	}
}
