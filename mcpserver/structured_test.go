package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestSearchResultWrittenAsEncoded: a search's tool result carries the
// RCP encoding of the answer as it is, written straight into the result
// (the SDK's direct path), also when hits hold characters encoding/json
// escapes; encoding/json's own encoding of the result is the same bytes.
func TestSearchResultWrittenAsEncoded(t *testing.T) {
	res := &rcp.RetrieveResult{Hits: []rcp.Hit{
		{ID: "a<1>", Score: 0.5, Text: "fish & chips <b>\u2028", Meta: map[string]any{"title": rcp.RawJSON(`"x & <y>"`), "n": rcp.RawJSON(` [1, 2.50 ] `)}},
		{ID: "b", Score: 0.25, Text: "plain"},
	}}
	enc, err := res.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	x := &mcp.CallToolResult{Content: hitsText(res, &rcp.RetrieveParams{}), StructuredContent: encodedJSON(enc)}
	direct, ok := x.AppendCompactJSON(nil)
	if !ok {
		t.Fatal("the SDK did not take the encoded answer as it is")
	}
	if !bytes.Contains(direct, append([]byte(`,"structuredContent":`), enc...)) {
		t.Fatalf("result %s does not carry the answer %s", direct, enc)
	}
	type wire mcp.CallToolResult // encoding/json over the struct, without the SDK's MarshalJSON
	want, err := json.Marshal(struct {
		*wire
	}{(*wire)(x)})
	if err != nil {
		t.Fatal(err)
	}
	var got, exp any
	if json.Unmarshal(direct, &got) != nil || json.Unmarshal(want, &exp) != nil {
		t.Fatalf("invalid JSON: %s / %s", direct, want)
	}
	if !bytes.Equal(mustMarshal(t, got), mustMarshal(t, exp)) {
		t.Fatalf("direct %s\nencoding/json %s", direct, want)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
