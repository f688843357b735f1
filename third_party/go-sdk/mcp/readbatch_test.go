// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	internaljson "github.com/modelcontextprotocol/go-sdk/internal/json"
	"github.com/modelcontextprotocol/go-sdk/internal/jsonrpc2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// readBatchAsReleased is readBatch without the shortcut for an object.
func readBatchAsReleased(data []byte) (msgs []jsonrpc.Message, isBatch bool, _ error) {
	var rawBatch []json.RawMessage
	if err := internaljson.Unmarshal(data, &rawBatch); err == nil {
		if len(rawBatch) == 0 {
			return nil, true, fmt.Errorf("empty batch")
		}
		for _, raw := range rawBatch {
			msg, err := jsonrpc2.DecodeMessage(raw)
			if err != nil {
				return nil, true, err
			}
			msgs = append(msgs, msg)
		}
		return msgs, true, nil
	}
	msg, err := jsonrpc2.DecodeMessage(data)
	return []jsonrpc.Message{msg}, false, err
}

// TestReadBatchMatchesRelease checks that skipping the batch attempt for
// an object changes no answer: messages, batch flag and error.
func TestReadBatchMatchesRelease(t *testing.T) {
	req := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search"}}`
	for _, in := range []string{
		req, " \r\n\t" + req, req + " ", "[" + req + "]", " [" + req + "," + req + "]", "[]", "null", " null", "",
		"  ", "{", "{}", `{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "[{}]",
		`"x"`, "1", req + req, "\ufeff" + req, "\x00" + req, "{" + req, `{"jsonrpc":"2.0","id":1,"result":{}}`,
	} {
		gm, gb, gerr := readBatch([]byte(in))
		wm, wb, werr := readBatchAsReleased([]byte(in))
		if gb != wb || fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(gm, wm) {
			t.Errorf("readBatch(%q) = %+v, %v, %v; as released %+v, %v, %v", in, gm, gb, gerr, wm, wb, werr)
		}
	}
}
