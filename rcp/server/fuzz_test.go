package server_test

import (
	"bufio"
	"bytes"
	"context"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// FuzzServeStdio feeds arbitrary input to a stdio server over StubBackend:
// it must not panic, and every output line must be a JSON-RPC response or
// notification that validates against rcp-1.0.json.
func FuzzServeStdio(f *testing.F) {
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"capabilities":{"log":{}}}}` + "\n"
	for _, s := range []string{
		init + `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"q","k":2,"_meta":{"progressToken":"t"}}}`,
		init + `[{"jsonrpc":"2.0","id":1,"method":"ping"},1,{"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}}]`,
		`{"jsonrpc":"2.0","id":1e3,"method":"info"}` + "\n\n[]\n{",
		init + `{"jsonrpc":"2.0","id":"x","method":"retrieve","params":{"query":[{"type":"text","text":"a"}],"fusion":{"alpha":"x"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"shutdown"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		"\xef\xbb\xbf" + init,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		srv := server.New(rcptest.NewStubBackend(3), server.Options{MaxBatch: 8, MaxLineBytes: 4096})
		var out bytes.Buffer
		if err := srv.ServeStdio(context.Background(), bytes.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			checkServerLine(t, sc.Bytes())
		}
	})
}

func checkServerLine(t *testing.T, line []byte) {
	fr, derr := jsonrpc.DecodeFrame(line)
	if derr != nil {
		t.Fatalf("unparseable output %q: %v", line, derr)
	}
	for _, m := range fr.Members {
		if m.Response == nil && (m.Request == nil || !m.Request.IsNotification()) {
			t.Fatalf("output member is neither a response nor a notification: %q", line)
		}
		if m.Response != nil && m.Response.Error != nil && m.Response.Error.Code == 0 {
			t.Fatalf("error code 0: %q", line)
		}
	}
	if err := rcptest.ValidateFrame(line); err != nil {
		t.Fatalf("output violates rcp-1.0.json: %v\n%s", err, line)
	}
}
