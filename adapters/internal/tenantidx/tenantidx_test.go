package tenantidx

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

type state struct{ name string }

// fake is a ProbeFunc over a set of existing index names.
type fake struct {
	mu     sync.Mutex
	exists map[string]bool
	calls  atomic.Int32
	err    error
}

func (f *fake) probe(_ context.Context, name string, create bool) (*state, error) {
	f.calls.Add(1)
	if f.err != nil {
		return nil, f.err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if create {
		f.exists[name] = true
	}
	if !f.exists[name] {
		return nil, nil
	}
	return &state{name: name}, nil
}

func newSet(f *fake) *Set[state] {
	return New("engine", &adapters.TenantIndex{Template: "docs-{tenant}"}, "docs", f.probe)
}

func code(err error) rcp.Code {
	var re *rcp.Error
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

func TestDisabled(t *testing.T) {
	s := New[state]("engine", nil, "docs", nil)
	if s.Enabled() {
		t.Fatal("Enabled without tenancy")
	}
	if _, err := s.For("acme"); err == nil {
		t.Fatal("For without tenancy: no error")
	}
	if _, _, ok, err := s.Write(context.Background(), true); ok || err != nil {
		t.Fatalf("Write without tenancy: ok=%v err=%v", ok, err)
	}
	base := &state{}
	if s.StateFor("docs-acme", base) != base {
		t.Fatal("StateFor without tenancy is not base")
	}
	if err := s.Verify(context.Background(), "docs-acme"); err != nil {
		t.Fatal(err)
	}
	var nilSet *Set[state]
	if nilSet.Enabled() {
		t.Fatal("nil set Enabled")
	}
}

func TestForNamesAndReuses(t *testing.T) {
	s := newSet(&fake{exists: map[string]bool{}})
	a, err := s.For("acme")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "docs-acme" {
		t.Fatalf("name %q", a.Name)
	}
	if b, _ := s.For("acme"); b != a {
		t.Fatal("For made a second entry for one tenant")
	}
	if s.ByName("docs-acme") != a || s.ByName("docs-other") != nil {
		t.Fatal("ByName")
	}
	if u, _ := s.For("ACME"); u.Name == a.Name {
		t.Fatal("distinct tenants share an index")
	}
}

func TestWrite(t *testing.T) {
	f := &fake{exists: map[string]bool{}}
	s := newSet(f)
	if _, _, ok, err := s.Write(context.Background(), true); !ok || code(err) != rcp.CodeUnauthorized {
		t.Fatalf("write without tenant: ok=%v err=%v", ok, err)
	}
	ctx := adapters.WithTenant(context.Background(), adapters.Tenant{Name: "acme"})
	ix, st, ok, err := s.Write(ctx, false)
	if !ok || err != nil || st != nil || ix.Name != "docs-acme" {
		t.Fatalf("write to absent index: %v %v %v %v", ix, st, ok, err)
	}
	if ix.State() != nil {
		t.Fatal("absent index has a state")
	}
	ix, st, ok, err = s.Write(ctx, true)
	if !ok || err != nil || st == nil || st.name != "docs-acme" || ix.State() != st {
		t.Fatalf("create: %v %v %v %v", ix, st, ok, err)
	}
	n := f.calls.Load()
	if _, st2, _, _ := s.Write(ctx, true); st2 != st || f.calls.Load() != n {
		t.Fatal("probed state was not kept")
	}
}

func TestProbeOnceConcurrently(t *testing.T) {
	f := &fake{exists: map[string]bool{"docs-acme": true}}
	s := newSet(f)
	ix, _ := s.For("acme")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, err := s.Probe(context.Background(), ix, false); err != nil || st == nil {
				t.Error(st, err)
			}
		}()
	}
	wg.Wait()
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("%d probes, want 1", n)
	}
}

func TestProbeErrorIsNotKept(t *testing.T) {
	f := &fake{exists: map[string]bool{"docs-acme": true}, err: errors.New("boom")}
	s := newSet(f)
	ix, _ := s.For("acme")
	if _, err := s.Probe(context.Background(), ix, false); err == nil {
		t.Fatal("no error")
	}
	f.err = nil
	if st, err := s.Probe(context.Background(), ix, false); err != nil || st == nil {
		t.Fatalf("after recovery: %v %v", st, err)
	}
}

func TestStateForAndVerify(t *testing.T) {
	f := &fake{exists: map[string]bool{"docs-acme": true}}
	s := newSet(f)
	base := &state{name: "base"}
	ctx := context.Background()
	if s.StateFor("docs", base) != base || s.StateFor("docs-acme", base) != base {
		t.Fatal("StateFor before probing is not base")
	}
	// Unknown targets and the configured index are not probed.
	if err := s.Verify(ctx, "docs-acme"); err != nil || f.calls.Load() != 0 {
		t.Fatalf("verify unknown: %v, %d calls", err, f.calls.Load())
	}
	if err := s.Verify(ctx, "docs"); err != nil || f.calls.Load() != 0 {
		t.Fatal("verify configured index probed")
	}
	ix, _ := s.For("acme")
	if err := s.Verify(ctx, ix.Name); err != nil || f.calls.Load() != 1 {
		t.Fatalf("verify: %v, %d calls", err, f.calls.Load())
	}
	if err := s.Verify(ctx, ix.Name); err != nil || f.calls.Load() != 1 {
		t.Fatal("verify probed twice")
	}
	if st := s.StateFor(ix.Name, base); st == base || st.name != "docs-acme" {
		t.Fatalf("StateFor after probe: %v", st)
	}
	f.err = errors.New("alias")
	other, _ := s.For("other")
	if err := s.Verify(ctx, other.Name); err == nil {
		t.Fatal("verify dropped the probe error")
	}
}
