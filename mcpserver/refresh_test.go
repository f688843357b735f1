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

	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- svc.ServeIO(ctx, mcpserver.Caller{}, sr, sw, time.Second) }()
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
		if slices.Equal(names, []string{"index_add", "index_delete", "search"}) {
			return
		}
	}
	t.Fatalf("tools %v after 10s: the stand-in was never replaced", names)
}
