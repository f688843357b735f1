// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package json

import (
	"bytes"
	"encoding/json"
	"testing"
)

var compactSeeds = []string{
	``, ` `, `{}`, ` { "a" : [ 1 , 2.5e3 , -0 , true , null ] } `, `"a \" b \\" `, `"\\\\"`, `"\\\""`,
	`{"text":"with spaces\tand\nescapes \u003c\u2028"}`, "\"raw \xff byte\"", "\"ctl \x01\"", `[1,]`, `01`, `-`,
	`1.`, `.5`, `1e`, `{"a":1}{"b":2}`, `{"a" 1}`, `"unterminated`, `tru`, `[[[[]]]]`, "\t\n\r[ ]\r\n",
	`{"a":"b\"}`, `"\u12"`, `"\x"`, `1E+2`, `-0.0e-0`, `[1e999]`, "\"\u00a0\"", "\u00a0{}",
}

// FuzzAppendCompactMatchesCompact checks that whatever AppendCompact
// accepts, encoding/json's Compact accepts too and compacts to the same
// bytes (what it refuses, callers hand to encoding/json).
func FuzzAppendCompactMatchesCompact(f *testing.F) {
	for _, s := range compactSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		got, ok := AppendCompact([]byte("prefix"), src)
		var want bytes.Buffer
		err := json.Compact(&want, src)
		if !ok {
			if string(got) != "prefix" {
				t.Fatalf("AppendCompact(%q) refused but changed dst to %q", src, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("AppendCompact(%q) = %q, but encoding/json refuses it: %v", src, got, err)
		}
		if !bytes.Equal(got, append([]byte("prefix"), want.Bytes()...)) {
			t.Fatalf("AppendCompact(%q) = %q, encoding/json: %q", src, got[6:], want.Bytes())
		}
	})
}

// TestAppendCompactAcceptsValid checks that AppendCompact takes the valid
// seeds (so the fast path is used) and refuses the invalid ones.
func TestAppendCompactAcceptsValid(t *testing.T) {
	for _, s := range compactSeeds {
		_, ok := AppendCompact(nil, []byte(s))
		if valid := json.Valid([]byte(s)); ok != valid {
			t.Errorf("AppendCompact(%q) took it: %v; encoding/json finds it valid: %v", s, ok, valid)
		}
	}
}
