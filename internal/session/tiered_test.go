package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// Tiered is the store the retrieval Engine consumes through the interface
// it declares (retrieval.SessionStore); this package does not import
// retrieval, only its test checks the fit.
var _ retrieval.SessionStore = (*Tiered)(nil)

// mapShared is a fake shared store (named as one): sets in a map, or
// every call failing when down is set.
type mapShared struct {
	mu   sync.Mutex
	sets map[string]map[string]bool
	down bool
}

func (m *mapShared) Seen(_ context.Context, set, _ string, members []string, _ time.Duration) ([]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, errors.New("fake: down")
	}
	out := make([]bool, len(members))
	for i, k := range members {
		out[i] = m.sets[set][k]
	}
	return out, nil
}

func (m *mapShared) Add(_ context.Context, set, _ string, members []string, _ time.Duration, _, _ int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errors.New("fake: down")
	}
	if m.sets == nil {
		m.sets = map[string]map[string]bool{}
	}
	if m.sets[set] == nil {
		m.sets[set] = map[string]bool{}
	}
	for _, k := range members {
		m.sets[set][k] = true
	}
	return nil
}

// TestTieredNamespaces: the shared store's sets of different (scope,
// namespace, session id) triples are apart however the bytes are split,
// and nothing raw reaches the store.
func TestTieredNamespaces(t *testing.T) {
	sh := &mapShared{}
	ctx := context.Background()
	a, b := NewTiered(New(Options{}), sh, "docs"), NewTiered(New(Options{}), sh, "other")
	a.Record(ctx, "key\x00tenant-a\x00", "s", []string{"i:x"})
	tests := []struct {
		name   string
		t      *Tiered
		ns, id string
	}{
		{"other tenant", a, "key\x00tenant-b\x00", "s"},
		{"bytes moved from namespace to id", a, "key\x00tenant-a", "\x00s"},
		{"bytes moved from id to namespace", a, "key\x00tenant-a\x00s", ""},
		{"other backend", b, "key\x00tenant-a\x00", "s"},
	}
	for _, tc := range tests {
		seen, fb := tc.t.Seen(ctx, tc.ns, tc.id, []string{"i:x"})
		if fb || seen[0] {
			t.Errorf("%s: seen %v fallback %v, want an empty set of its own", tc.name, seen, fb)
		}
	}
	if seen, _ := a.Seen(ctx, "key\x00tenant-a\x00", "s", []string{"i:x"}); !seen[0] {
		t.Fatal("the recording namespace does not see its own key")
	}
	for set, members := range sh.sets {
		for m := range members {
			if strings.Contains(set+m, "tenant") || strings.Contains(set+m, "i:x") || len(m) != 32 || len(set) != 64 {
				t.Fatalf("raw text or unexpected shape in the store: set %q member %q", set, m)
			}
		}
	}
}

// TestTieredFallback: with the shared store down, Seen answers from this
// replica's own store (always written through) and says it fell back;
// when the store is back, its answer is the shared one again.
func TestTieredFallback(t *testing.T) {
	sh := &mapShared{}
	ctx := context.Background()
	tr := NewTiered(New(Options{}), sh, "docs")
	if fb := tr.Record(ctx, "n", "s", []string{"i:a"}); fb {
		t.Fatal("Record fell back on a live store")
	}
	sh.mu.Lock()
	sh.down = true
	sh.mu.Unlock()
	if fb := tr.Record(ctx, "n", "s", []string{"i:b"}); !fb {
		t.Fatal("Record on a down store did not report the fallback")
	}
	seen, fb := tr.Seen(ctx, "n", "s", []string{"i:a", "i:b", "i:c"})
	if !fb || !seen[0] || !seen[1] || seen[2] {
		t.Fatalf("down: seen %v fallback %v, want [true true false] from the replica's own store", seen, fb)
	}
	sh.mu.Lock()
	sh.down = false
	sh.mu.Unlock()
	other := NewTiered(New(Options{}), sh, "docs") // another replica
	seen, fb = other.Seen(ctx, "n", "s", []string{"i:a", "i:b"})
	if fb || !seen[0] || seen[1] {
		t.Fatalf("back: seen %v fallback %v, want [true false]: i:b was only recorded locally", seen, fb)
	}
	// An oversized key is never sent and never seen.
	long := strings.Repeat("x", MaxKeyBytes+1)
	tr.Record(ctx, "n", "s", []string{long})
	if seen, _ := tr.Seen(ctx, "n", "s", []string{long, "i:a"}); seen[0] || !seen[1] {
		t.Fatalf("oversized key: seen %v, want [false true]", seen)
	}
}
