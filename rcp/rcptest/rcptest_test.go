package rcptest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func TestValidateFrame(t *testing.T) {
	for _, tc := range []struct {
		frame string
		ok    bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, false},
		{`{"jsonrpc":"1.0","id":1,"result":{}}`, false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1.5}}`, false},
		{`[]`, false},
	} {
		if err := ValidateFrame([]byte(tc.frame)); (err == nil) != tc.ok {
			t.Errorf("ValidateFrame(%s) = %v, want ok=%v", tc.frame, err, tc.ok)
		}
	}
}

func TestValidateResult(t *testing.T) {
	if err := ValidateResult("ping", json.RawMessage(`{"nonce":"x"}`)); err != nil {
		t.Error(err)
	}
	if err := ValidateResult("initialize", json.RawMessage(`{"protocolVersion":0}`)); err == nil {
		t.Error("initialize result without server/capabilities validated")
	}
}

func TestClientRoundTrip(t *testing.T) {
	c := NewClient(t, NewStubBackend(3))
	ctx := context.Background()
	if _, rerr := c.Call(ctx, rcp.MethodRetrieve, map[string]any{"query": "q"}); rerr == nil || rerr.Code != rcp.CodeNotInitialized {
		t.Fatalf("pre-initialize retrieve: got %v, want -32001", rerr)
	}
	res, err := c.Initialize(ctx)
	if err != nil || res.ProtocolVersion != 1 || res.Meta["conformance"] != "L0" {
		t.Fatalf("initialize: %+v, %v", res, err)
	}
	raw, rerr := c.Call(ctx, rcp.MethodRetrieve, map[string]any{"query": "q", "k": 2})
	if rerr != nil {
		t.Fatal(rerr)
	}
	var rr rcp.RetrieveResult
	if err := json.Unmarshal(raw, &rr); err != nil || len(rr.Hits) != 2 {
		t.Fatalf("hits %+v, %v", rr, err)
	}
}

func TestCheckVectorBlobs(t *testing.T) {
	for _, tc := range []struct {
		result string
		ok     bool
	}{
		{`{"vectors":[[0.5,1]]}`, true},
		{`{"vectors":["AAAAAAAAgD8="],"encoding":"f32-base64","dimension":2}`, true},
		{`{"vectors":["AAAAAA=="],"encoding":"f32-base64","dimension":2}`, false},
		{`{"vectors":["AAAAAAAAgD8="],"encoding":"f32-base64"}`, false},
		{`{"vectors":["!!"],"encoding":"f32-base64","dimension":1}`, false},
		{`{"vectors":[[1]],"encoding":"f32-base64","dimension":1}`, false},
	} {
		if err := CheckVectorBlobs(json.RawMessage(tc.result)); (err == nil) != tc.ok {
			t.Errorf("CheckVectorBlobs(%s) = %v, want ok=%v", tc.result, err, tc.ok)
		}
	}
}
