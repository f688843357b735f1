package mcpserver_test

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/mcpserver"
)

// TestStandInReplacedWhenEngineComesUpDuringBuild: an engine that comes
// up after a stdio session's server was built with its stand-in, but
// before the session's refresh starts watching, still has the stand-in
// replaced by its tools. A refresh that decided afresh which engines were
// pending found none and left the stand-in search tool for good, so the
// client never saw the write tools.
func TestStandInReplacedWhenEngineComesUpDuringBuild(t *testing.T) {
	up := make(chan struct{})
	e := engine(t, corpus(5, 10), true, testFields)
	svc := service(t, mcpserver.Options{Engines: []mcpserver.Engine{{Name: "docs", Backend: e, Up: up}}})
	t.Cleanup(mcpserver.SetAfterBuild(func() { close(up) }))
	awaitTools(t, svc, []string{"index_add", "index_delete", "search"})
}

// TestFederationToolAddedWhenItComesUpDuringBuild: the same window for
// the federation's search tool, which a session built while the
// federation was pending gets when it comes up.
func TestFederationToolAddedWhenItComesUpDuringBuild(t *testing.T) {
	up := make(chan struct{})
	a := engine(t, corpus(6, 10), false, testFields)
	b := engine(t, corpus(7, 10), false, testFields)
	svc := service(t, mcpserver.Options{
		Engines:    []mcpserver.Engine{{Name: "a", Backend: a}, {Name: "b", Backend: b}},
		Federation: &mcpserver.Engine{Name: "federation", Backend: a, Up: up},
	})
	t.Cleanup(mcpserver.SetAfterBuild(func() { close(up) }))
	awaitTools(t, svc, []string{"search", "search_a", "search_b"})
}

// awaitTools serves svc over stdio pipes and lists its tools until they
// are want, failing after 10s.
func awaitTools(t *testing.T, svc *mcpserver.Service, want []string) {
	t.Helper()
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = svc.ServeIO(ctx, mcpserver.Caller{}, sr, sw, time.Second) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		names = names[:0]
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		slices.Sort(names)
		if slices.Equal(names, want) {
			return
		}
	}
	t.Fatalf("tools %v after 10s, want %v: the session missed what came up while it was built", names, want)
}
