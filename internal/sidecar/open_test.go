package sidecar

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// failingProbe is a memory store whose probe fails and whose Close is
// counted.
type failingProbe struct {
	*memory.Store
	closed int
}

func (f *failingProbe) Probe(context.Context) (*capability.Evidence, error) {
	return nil, errors.New("engine unreachable")
}

func (f *failingProbe) Close() error { f.closed++; return f.Store.Close() }

// testRegistry registers a "fake" engine whose Open returns ad.
func testRegistry(ad adapters.Adapter) *adapters.Registry {
	return adapters.NewRegistry(adapters.Factory{
		Name:      "fake",
		NewConfig: memory.Factory.NewConfig,
		Open: func(context.Context, adapters.Config, adapters.Deps) (adapters.Adapter, error) {
			return ad, nil
		},
	})
}

// A backend whose adapter opened but whose first probe fails has its
// adapter closed, with and without the resilient decorator; a late start
// keeps it open for the caller to retry.
func TestOpenBackendClosesOnFailedProbe(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name string
		opts openOptions
	}{
		{"plain", openOptions{}},
		{"resilient", openOptions{resilient: true}},
		{"federated required", openOptions{resilient: true, federated: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ad := &failingProbe{Store: memory.New(memory.Options{})}
			b := &config.Backend{Name: "b", Engine: "fake", Config: memory.Factory.NewConfig(), Policy: config.DefaultPolicy()}
			o := tc.opts
			o.log, o.registry = log, testRegistry(ad)
			op, err := openBackend(context.Background(), b, o)
			if err == nil || !strings.Contains(err.Error(), "probe backend b") {
				t.Fatalf("openBackend = %v, %v; want a probe error", op, err)
			}
			if ad.closed != 1 {
				t.Fatalf("adapter closed %d times, want 1", ad.closed)
			}
		})
	}
	t.Run("late", func(t *testing.T) {
		ad := &failingProbe{Store: memory.New(memory.Options{})}
		b := &config.Backend{Name: "b", Engine: "fake", Config: memory.Factory.NewConfig(), Policy: config.DefaultPolicy()}
		op, err := openBackend(context.Background(), b, openOptions{log: log, registry: testRegistry(ad), resilient: true, late: true})
		if err != nil || op.engine != nil || op.probeErr == nil {
			t.Fatalf("openBackend = %+v, %v; want a pending late start", op, err)
		}
		if ad.closed != 0 {
			t.Fatalf("a late start closed its adapter")
		}
		op.Close()
		if ad.closed != 1 {
			t.Fatalf("opened.Close closed the adapter %d times, want 1", ad.closed)
		}
	})
}

// A federation member check fails before anything is opened.
func TestOpenBackendMemberCheckOpensNothing(t *testing.T) {
	ad := &failingProbe{Store: memory.New(memory.Options{})}
	reg := adapters.NewRegistry(adapters.Factory{Name: "fake", NewConfig: memory.Factory.NewConfig,
		Open: func(context.Context, adapters.Config, adapters.Deps) (adapters.Adapter, error) {
			t.Fatal("adapter opened for a backend that cannot be a member")
			return ad, nil
		}})
	b := &config.Backend{Name: "not/a/segment", Engine: "fake", Config: memory.Factory.NewConfig()}
	_, err := openBackend(context.Background(), b, openOptions{log: slog.New(slog.DiscardHandler), registry: reg, federated: true})
	if !isMemberError(err) {
		t.Fatalf("err = %v, want a member error", err)
	}
}
