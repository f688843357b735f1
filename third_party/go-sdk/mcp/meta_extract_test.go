// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	internaljson "github.com/modelcontextprotocol/go-sdk/internal/json"
)

// extractRequestMetaParsed is extractRequestMeta as it was before params
// without "_meta" were passed over: always parsed.
func extractRequestMetaParsed(rawParams json.RawMessage) Meta {
	if len(rawParams) == 0 {
		return nil
	}
	var meta struct {
		Meta Meta `json:"_meta"`
	}
	if err := internaljson.Unmarshal(rawParams, &meta); err != nil {
		return nil
	}
	return meta.Meta
}

// metaNames are member names, among them every way to spell "_meta" in
// JSON and names that only resemble it.
var metaNames = []string{`"_meta"`, `"\u005fmeta"`, `"_m\u0065ta"`, `"\u005F\u006D\u0065\u0074\u0061"`, `"_Meta"`, `"_META"`,
	`"meta"`, `"_meta "`, `"__meta"`, `"name"`, `"arguments"`, `"a\"_meta"`, `"progressToken"`}

// metaValues are member values: objects (some holding "_meta" members
// or strings), strings holding the name, and other JSON values.
var metaValues = []string{`{"progressToken":1}`, `{}`, `null`, `"_meta"`, `"\"_meta\""`, `{"_meta":{"x":1}}`, `[1,"_meta"]`,
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, `7`, `true`, `"\\"`, `{"a":{"b":[{"_meta":2}]}}`}

// TestExtractRequestMetaMatchesParse compares extractRequestMeta with
// parsing every params object, over generated objects mixing those names
// and values, with whitespace, duplicates and invalid JSON.
func TestExtractRequestMetaMatchesParse(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 9))
	found := 0
	for i := range 20000 {
		var b strings.Builder
		b.WriteString([]string{"{", " {", "{\n"}[r.IntN(3)])
		for j := range r.IntN(5) {
			if j > 0 {
				b.WriteString([]string{",", " , "}[r.IntN(2)])
			}
			b.WriteString(metaNames[r.IntN(len(metaNames))])
			b.WriteString([]string{":", " : "}[r.IntN(2)])
			b.WriteString(metaValues[r.IntN(len(metaValues))])
		}
		b.WriteString([]string{"}", "} ", "}\t", "", "}}", "} x"}[r.IntN(6)])
		raw := json.RawMessage(b.String())
		if r.IntN(20) == 0 {
			raw = json.RawMessage([]string{"", "null", "[]", `"_meta"`, "{"}[r.IntN(5)])
		}
		got, want := extractRequestMeta(raw), extractRequestMetaParsed(raw)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d case %d: extractRequestMeta(%s) = %v, parsing gives %v", seed, i, raw, got, want)
		}
		if want != nil {
			found++
		}
	}
	// Enough generated params hold a _meta for the comparison to mean
	// something, escaped spellings among them.
	if found < 2000 {
		t.Errorf("seed %d: only %d params hold a _meta", seed, found)
	}
	if m := extractRequestMeta(json.RawMessage(`{"\u005fmeta":{"k":1}}`)); m == nil {
		t.Errorf("an escaped _meta name was passed over")
	}
}
