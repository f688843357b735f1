package server_test

import (
	"context"
	"io"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// BenchmarkDispatchRetrieve measures decode → dispatch → encode of one
// retrieve returning 10 hits through StubBackend over the HTTP handler
// (no network: the handler is called directly, stateless mode).
func BenchmarkDispatchRetrieve(b *testing.B) {
	h := server.New(rcptest.NewStubBackend(10), server.Options{}).Handler()
	body := `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"what is rcp","k":10,"mode":"hybrid","fusion":{"method":"rrf"},"_meta":{"trace":"x"}}}`
	b.ReportAllocs()
	for b.Loop() {
		w := do(b, h, httpReq{"POST", "/rcp/retrieve", body, nil})
		if w.Code != 200 || w.Body.Len() < 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkStdioRetrieve is the same request over a stdio session.
func BenchmarkStdioRetrieve(b *testing.B) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := server.New(rcptest.NewStubBackend(10), server.Options{})
	go func() { _ = srv.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	buf := make([]byte, 64<<10)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			b.Fatal(err)
		}
		if _, err := outR.Read(buf); err != nil {
			b.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	body := `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"what is rcp","k":10,"mode":"hybrid","fusion":{"method":"rrf"},"_meta":{"trace":"x"}}}`
	b.ReportAllocs()
	for b.Loop() {
		send(body)
	}
	inW.Close()
}
