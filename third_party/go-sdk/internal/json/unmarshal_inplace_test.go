// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package json

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decoderUnmarshal is Unmarshal as it was before it parsed in place.
func decoderUnmarshal(data []byte, v any) error {
	if err := checkMaxDepth(data, defaultMaxDepth); err != nil {
		return err
	}
	return NewDecoder(bytes.NewReader(data)).Decode(v)
}

type inplaceTarget struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Name    string          `json:"name"`
	N       int64           `json:"n"`
	F       float64         `json:"f"`
	List    []string        `json:"list"`
	Nested  *inplaceTarget  `json:"nested"`
}

// unmarshalTargets returns fresh values of the types messages decode into.
func unmarshalTargets() []any {
	return []any{new(any), new(inplaceTarget), new(map[string]json.RawMessage), new(json.RawMessage), new([]any), new(string)}
}

// TestUnmarshalInPlaceMatchesDecoder checks that Unmarshal decodes every
// input (valid, invalid, with trailing bytes or whitespace) into the same
// value with the same error as the Decoder it used before.
func TestUnmarshalInPlaceMatchesDecoder(t *testing.T) {
	inputs := []string{
		``, ` `, `{}`, ` {} `, "{}\n", `[]`, `null`, `"s"`, `1`, `-0`, `1e400`, `true`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"q","k":10}}}`,
		`{"name":"x","n":9007199254740993,"f":1.5,"list":["a","\u00e9","\ud83d\ude00"],"nested":{"name":"y"}}`,
		`{"Name":"case","NAME":"case2"}`, `{"name":"a","name":"b"}`, `{"n":"notanumber"}`, `{"n":1.5}`,
		`{"params": [1, 2, {"a" : null}] }`, `{"a":1} trailing`, `{"a":1}{"b":2}`, `{"a":1`, `{"a":}`,
		`{"a":"\x01"}`, `{"a":"bad \q escape"}`, "{\"a\":\"\xff\"}", `[1,2,]`, `{"a":1,}`, `nul`, `"unterminated`,
		`{"id":"7","jsonrpc":"2.0","result":{"content":[{"type":"text","text":"<b>&</b>"}]}}`,
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		inputs = append(inputs, randomJSON(rng, 0))
	}
	for i, in := range inputs {
		for j := range unmarshalTargets() {
			got, want := unmarshalTargets()[j], unmarshalTargets()[j]
			gerr, werr := Unmarshal([]byte(in), got), decoderUnmarshal([]byte(in), want)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("input %d %q into %T: error %v, Decoder's %v", i, in, got, gerr, werr)
			}
			if werr == nil {
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("input %d %q into %T: (-Decoder +Unmarshal)\n%s", i, in, got, d)
				}
			}
		}
	}
}

// randomJSON returns a JSON text that is mostly valid, sometimes cut or
// with a byte changed.
func randomJSON(rng *rand.Rand, depth int) string {
	var b bytes.Buffer
	writeRandomValue(&b, rng, depth)
	s := b.String()
	switch rng.Intn(8) {
	case 0:
		if len(s) > 1 {
			s = s[:rng.Intn(len(s))]
		}
	case 1:
		if len(s) > 0 {
			k := rng.Intn(len(s))
			s = s[:k] + string(`{}[]",:x\ `[rng.Intn(10)]) + s[k+1:]
		}
	case 2:
		s = " \n" + s + "\t "
	}
	return s
}

func writeRandomValue(b *bytes.Buffer, rng *rand.Rand, depth int) {
	keys := []string{"jsonrpc", "id", "method", "params", "name", "n", "f", "list", "nested", "Name", "x"}
	switch k := rng.Intn(8); {
	case depth < 4 && k < 3:
		b.WriteByte('{')
		for i, n := 0, rng.Intn(5); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "%q:", keys[rng.Intn(len(keys))])
			writeRandomValue(b, rng, depth+1)
		}
		b.WriteByte('}')
	case depth < 4 && k < 5:
		b.WriteByte('[')
		for i, n := 0, rng.Intn(4); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			writeRandomValue(b, rng, depth+1)
		}
		b.WriteByte(']')
	case k == 5:
		fmt.Fprintf(b, "%d", rng.Int63n(1<<62)-1<<61)
	case k == 6:
		fmt.Fprintf(b, "%g", rng.NormFloat64()*1e6)
	default:
		s := []string{"", "a", "é", `<&>`, "\u2028", "line\nbreak", `quote"`}[rng.Intn(7)]
		q, _ := json.Marshal(s)
		b.Write(q)
	}
}

// TestUnmarshalDoesNotBuffer checks that decoding a small message no
// longer allocates a Decoder's read buffer of 32 kB or more.
func TestUnmarshalDoesNotBuffer(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"q"}}}`)
	var m runtime.MemStats
	perCall := func(f func([]byte, any) error) uint64 {
		runtime.GC()
		runtime.ReadMemStats(&m)
		before := m.TotalAlloc
		const n = 100
		for i := 0; i < n; i++ {
			var v inplaceTarget
			if err := f(msg, &v); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&m)
		return (m.TotalAlloc - before) / n
	}
	got, old := perCall(Unmarshal), perCall(decoderUnmarshal)
	if got >= 32<<10 || old < 32<<10 {
		t.Fatalf("bytes allocated per Unmarshal: %d (Decoder: %d); want under 32 kB", got, old)
	}
}

func BenchmarkUnmarshalMessage(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"how does a search engine rank documents","k":10}}}`)
	b.ReportAllocs()
	for b.Loop() {
		var v inplaceTarget
		if err := Unmarshal(msg, &v); err != nil {
			b.Fatal(err)
		}
	}
}
