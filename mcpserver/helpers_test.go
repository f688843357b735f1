package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/mcpserver"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// corpus is a small generated corpus: every document mentions "sun", so a
// query for it recalls them all and the filter alone decides the set.
func corpus(seed uint64, n int) []adapters.Document {
	r := rand.New(rand.NewPCG(seed, 1))
	topics := []string{"biology", "geology", "astronomy", "history"}
	words := []string{"ocean", "rock", "star", "cell", "empire", "comet", "river", "plate"}
	docs := make([]adapters.Document, n)
	for i := range docs {
		text := "the sun"
		for j := 0; j < 1+r.IntN(6); j++ {
			text += " " + words[r.IntN(len(words))]
		}
		meta := map[string]any{"topic": topics[r.IntN(len(topics))], "year": int64(1990 + r.IntN(35)),
			"title": fmt.Sprintf("Document %d", i)}
		if r.IntN(3) > 0 {
			meta["rating"] = float64(r.IntN(50)) / 10
		}
		if r.IntN(2) == 0 {
			meta["published"] = r.IntN(2) == 0
		}
		docs[i] = adapters.Document{ID: fmt.Sprintf("d%03d", i), Text: text, Meta: meta}
	}
	return docs
}

// engine is a memory-backed retrieval Engine over docs.
func engine(t testing.TB, docs []adapters.Document, writable bool, fields map[string]filterlang.FieldType) *retrieval.Engine {
	t.Helper()
	store := memory.New(memory.Options{Fields: fields, Writable: writable})
	store.Add(docs...)
	e, err := retrieval.NewEngine(context.Background(), store, retrieval.Options{
		Name: "test", Version: "1",
		Policy: capability.Policy{MaxK: 100, DefaultCandidateK: 100, Writable: writable},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// connect serves svc to caller over in-memory transports and returns the
// client session.
func connect(t testing.TB, svc *mcpserver.Service, caller mcpserver.Caller, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ss, err := svc.Server(caller).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func service(t testing.TB, o mcpserver.Options) *mcpserver.Service {
	t.Helper()
	if o.Name == "" {
		o.Name, o.Version = "rcp-sidecar", "test"
	}
	s, err := mcpserver.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// call runs a tool and decodes its structured content.
func call(t testing.TB, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	if res.IsError {
		return res, errorObject(t, res)
	}
	var sc map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &sc)
	return res, sc
}

// errorObject checks that an isError result has no structured content (a
// client validates it against the tool's output schema, errors included)
// and returns the RCP error object its text carries on its last line:
// {"error":{code, message, data}}.
func errorObject(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if res.StructuredContent != nil {
		t.Fatalf("isError result with structured content %v: it fails the output schema in clients", res.StructuredContent)
	}
	if len(res.Content) != 1 {
		t.Fatalf("isError result with %d content blocks, want 1", len(res.Content))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var sc map[string]any
	if err := json.Unmarshal([]byte(text[strings.LastIndex(text, "\n")+1:]), &sc); err != nil {
		t.Fatalf("isError text %q does not end with the RCP error object: %v", text, err)
	}
	return sc
}

// ids lists the hit ids of a structured retrieve result.
func ids(sc map[string]any) []string {
	hits, _ := sc["hits"].([]any)
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.(map[string]any)["id"].(string))
	}
	return out
}

// rcpError is the code and error.data.field of an isError result.
func rcpError(t testing.TB, res *mcp.CallToolResult, sc map[string]any) (code int, field string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error, got %v", sc)
	}
	e, _ := sc["error"].(map[string]any)
	if e == nil {
		t.Fatalf("isError result without an RCP error object: %v", sc)
	}
	if d, ok := e["data"].(map[string]any); ok {
		field, _ = d["field"].(string)
	}
	return int(e["code"].(float64)), field
}

// direct runs the same retrieve on the backend, as an RCP client would.
func direct(t testing.TB, e *retrieval.Engine, params string) (*rcp.RetrieveResult, *rcp.Error) {
	t.Helper()
	var m map[string]any
	_ = json.Unmarshal([]byte(params), &m)
	if _, ok := m["k"]; !ok && m != nil {
		m["k"] = 10 // the tool's default
		b, _ := json.Marshal(m)
		params = string(b)
	}
	p, perr := rcp.DecodeParams[rcp.RetrieveParams](json.RawMessage(params))
	if perr != nil {
		return nil, perr
	}
	r, err := e.Retrieve(context.Background(), p)
	if err != nil {
		return nil, rcp.AsError(err)
	}
	return r, nil
}
