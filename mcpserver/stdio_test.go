package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/mcpserver"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// slow is a fake backend whose retrieve waits d (or until its call ends)
// before answering from the real engine behind it.
type slow struct {
	server.Backend
	d time.Duration
}

func (s slow) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	select {
	case <-time.After(s.d):
		return s.Backend.Retrieve(ctx, p)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pipeScript is initialize, initialized, then n searches, as a client
// writing into a pipe it then closes.
func pipeScript(n int) string {
	lines := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	for i := 1; i <= n; i++ {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"sun"}}}`, i))
	}
	return strings.Join(lines, "\n") + "\n"
}

// answered lists the ids of the responses in out.
func answered(t *testing.T, out string) []int {
	t.Helper()
	var ids []int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var f struct {
			ID *int `json:"id"`
		}
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("not JSON on stdout: %q", l)
		}
		if f.ID != nil {
			ids = append(ids, *f.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestServeIOAnswersAtEOF: calls still running when stdin ends are
// answered before ServeIO returns.
func TestServeIOAnswersAtEOF(t *testing.T) {
	e := engine(t, corpus(9, 20), false, testFields)
	svc := service(t, mcpserver.Options{Engines: []mcpserver.Engine{{Name: "docs", Backend: slow{e, 300 * time.Millisecond}}}})
	var out bytes.Buffer
	if err := svc.ServeIO(context.Background(), mcpserver.Caller{}, strings.NewReader(pipeScript(4)), &out, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := answered(t, out.String()); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Fatalf("answered %v, want 0..4\n%s", got, out.String())
	}
}

// TestServeIODrainIsBounded: a call that outlives the grace period does
// not keep ServeIO from returning after stdin ends.
func TestServeIODrainIsBounded(t *testing.T) {
	e := engine(t, corpus(9, 20), false, testFields)
	svc := service(t, mcpserver.Options{Engines: []mcpserver.Engine{{Name: "docs", Backend: slow{e, time.Hour}}}})
	var out bytes.Buffer
	const grace = 300 * time.Millisecond
	start := time.Now()
	if err := svc.ServeIO(context.Background(), mcpserver.Caller{}, strings.NewReader(pipeScript(1)), &out, grace); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < grace || took > grace+20*time.Second {
		t.Fatalf("ServeIO returned after %v with grace %v", took, grace)
	}
	if got := answered(t, out.String()); !slices.Equal(got, []int{0}) {
		t.Fatalf("answered %v, want the initialize only\n%s", got, out.String())
	}
}
