package embedding

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// checkReadResponse compares readResponse with json.Unmarshal, the
// oracle, on one document: whenever the fast path accepts it, the
// oracle must accept it too and decode the same indices and the same
// float64 bits. It reports whether the fast path accepted.
func checkReadResponse(t *testing.T, raw []byte, repro string) bool {
	t.Helper()
	got, ok := readResponse(raw, 0)
	var want embedResponse
	err := json.Unmarshal(raw, &want)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("%s: fast path accepted what json.Unmarshal refuses (%v): %.200q", repro, err, raw)
	}
	if len(got.Data) != len(want.Data) {
		t.Fatalf("%s: %d items, json.Unmarshal %d: %.200q", repro, len(got.Data), len(want.Data), raw)
	}
	for i := range got.Data {
		g, w := got.Data[i], want.Data[i]
		if (g.Index == nil) != (w.Index == nil) || (g.Index != nil && *g.Index != *w.Index) {
			t.Fatalf("%s: item %d index %v, json.Unmarshal %v: %.200q", repro, i, g.Index, w.Index, raw)
		}
		ge, we := g.Embedding.values, w.Embedding.values
		if (ge == nil) != (we == nil) || len(ge) != len(we) || g.Embedding.packed != w.Embedding.packed {
			t.Fatalf("%s: item %d embedding %v (packed %t), json.Unmarshal %v (packed %t)", repro, i, ge, g.Embedding.packed, we, w.Embedding.packed)
		}
		for j := range ge {
			if math.Float64bits(ge[j]) != math.Float64bits(we[j]) {
				t.Fatalf("%s: item %d element %d: %x, json.Unmarshal %x", repro, i, j, math.Float64bits(ge[j]), math.Float64bits(we[j]))
			}
		}
	}
	return true
}

// genResponse writes a seeded /v1/embeddings answer: mostly the shape
// servers send, with whitespace, extra members, escapes and number forms
// varied, and now and then a member or value that json.Unmarshal reads
// differently or refuses (a name in other letter case, a repeat, a
// fractional index, a string element, an out-of-range number).
func genResponse(r *rand.Rand, odd bool) string {
	var b strings.Builder
	ws := func() {
		if r.IntN(4) == 0 {
			b.WriteString([]string{" ", "\n", "\t", "\r\n  "}[r.IntN(4)])
		}
	}
	pick := func(p int) bool { return odd && r.IntN(p) == 0 }
	name := func(n string) string {
		if pick(20) {
			return strings.ToUpper(n[:1]) + n[1:]
		}
		return n
	}
	extra := func() {
		vals := []string{`"list"`, `"e5-small"`, `{"prompt_tokens":5,"total_tokens":5}`, `null`, `true`, `[1,"a",{"b":[]}]`,
			`"esc\"aped \\ \u00e9 \n"`, `-0.5e+10`, `1e400`, `"\ud83d\ude00"`, `"caf` + "\xc3\xa9" + `"`}
		if pick(15) {
			vals = append(vals, `"bad \x escape"`, `01`, `"ctl`+"\x01"+`"`, `[1,]`, `tru`)
		}
		fmt.Fprintf(&b, `"%s":`, []string{"object", "model", "usage", "id", "extra"}[r.IntN(5)])
		ws()
		b.WriteString(vals[r.IntN(len(vals))])
	}
	num := func() string {
		x := r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-4))
		switch r.IntN(8) {
		case 0:
			return strconv.FormatFloat(x, 'g', 17, 64)
		case 1:
			return strconv.FormatFloat(x, 'e', -1, 64)
		case 2:
			return strconv.Itoa(r.IntN(256) - 128)
		case 3:
			return "-0"
		case 4:
			return strconv.FormatFloat(x, 'E', 6, 64)
		}
		return strconv.FormatFloat(float64(float32(x)), 'g', -1, 32)
	}
	b.WriteByte('{')
	ws()
	for range r.IntN(2) {
		extra()
		b.WriteByte(',')
		ws()
	}
	fmt.Fprintf(&b, `"%s":`, name("data"))
	ws()
	b.WriteByte('[')
	items := r.IntN(4)
	for i := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		ws()
		b.WriteByte('{')
		fields := []func(){
			func() {
				fmt.Fprintf(&b, `"%s":`, name("index"))
				ws()
				switch {
				case pick(10):
					b.WriteString([]string{`1.0`, `"1"`, `1e2`, `99999999999999999999`, `-3`, `123456789012345678`}[r.IntN(6)])
				case r.IntN(10) == 0:
					b.WriteString("null")
				default:
					b.WriteString(strconv.Itoa(i))
				}
			},
			func() {
				fmt.Fprintf(&b, `"%s":`, name("embedding"))
				ws()
				if r.IntN(15) == 0 {
					b.WriteString("null")
					return
				}
				if r.IntN(3) == 0 {
					b.WriteString(genPacked(r, odd))
					return
				}
				b.WriteByte('[')
				for j := range r.IntN(10) {
					if j > 0 {
						b.WriteByte(',')
					}
					ws()
					if pick(30) {
						b.WriteString([]string{`"0.1"`, `1e400`, `null`, `[1]`, `.5`, `+1`, `1.`, `NaN`}[r.IntN(8)])
					} else {
						b.WriteString(num())
					}
					ws()
				}
				b.WriteByte(']')
			},
			func() { b.WriteString(`"object":"embedding"`) },
		}
		if pick(10) {
			fields = append(fields, fields[r.IntN(2)]) // a repeated member
		}
		r.Shuffle(len(fields), func(a, c int) { fields[a], fields[c] = fields[c], fields[a] })
		for j, f := range fields {
			if j > 0 {
				b.WriteByte(',')
			}
			ws()
			f()
			ws()
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	ws()
	if r.IntN(3) == 0 {
		b.WriteByte(',')
		extra()
	}
	b.WriteByte('}')
	ws()
	s := b.String()
	if pick(10) && len(s) > 0 { // a cut or a changed byte
		if r.IntN(2) == 0 {
			return s[:r.IntN(len(s))]
		}
		bs := []byte(s)
		bs[r.IntN(len(bs))] = "{}[],:\" -0.eE\\x"[r.IntN(15)]
		return string(bs)
	}
	return s
}

// genPacked writes a base64 embedding as a JSON string: random float32
// bits (NaN and infinities among them), padded or not, and when odd a
// string json.Unmarshal reads differently from its bytes (an escaped
// slash, a \u escape) or one unpack refuses (a byte outside the
// alphabet, a length that is not whole float32 values).
func genPacked(r *rand.Rand, odd bool) string {
	raw := make([]byte, 4*r.IntN(10))
	for i := 0; i < len(raw); i += 4 {
		bits := r.Uint32()
		if r.IntN(2) == 0 {
			bits = math.Float32bits(float32(r.NormFloat64()))
		}
		binary.LittleEndian.PutUint32(raw[i:], bits)
	}
	if odd && r.IntN(6) == 0 {
		raw = append(raw, byte(r.IntN(256))) // not whole float32 values
	}
	enc := base64.StdEncoding
	if r.IntN(3) == 0 {
		enc = base64.RawStdEncoding
	}
	s := enc.EncodeToString(raw)
	if odd && len(s) > 0 && r.IntN(4) == 0 {
		i := r.IntN(len(s))
		s = s[:i] + []string{`\/`, `\u0041`, `\n`, "!", "=", "é", "\n", "\r\n", "\t"}[r.IntN(9)] + s[i+1:]
	}
	return `"` + s + `"`
}

// TestReadResponseMatchesUnmarshal runs the differential over seeded
// documents: the common shape must take the fast path, and every
// document the fast path takes must decode as json.Unmarshal decodes it.
func TestReadResponseMatchesUnmarshal(t *testing.T) {
	const seed, n = 20261206, 20000
	r := rand.New(rand.NewPCG(seed, 0))
	var plain, plainFast, oddFast, oddRefused int
	for i := range n {
		odd := i%2 == 1
		doc := genResponse(r, odd)
		repro := fmt.Sprintf("seed %d document %d (go test -run TestReadResponseMatchesUnmarshal ./embedding/)", seed, i)
		fast := checkReadResponse(t, []byte(doc), repro)
		var v embedResponse
		refused := json.Unmarshal([]byte(doc), &v) != nil
		switch {
		case !odd:
			plain++
			if fast {
				plainFast++
			} else if !refused {
				t.Fatalf("%s: the common shape fell back to json.Unmarshal: %.300q", repro, doc)
			}
		case fast:
			oddFast++
		case refused:
			oddRefused++
		}
	}
	if plainFast < plain*9/10 || oddFast == 0 || oddRefused == 0 {
		t.Fatalf("generator coverage: %d/%d common documents fast, %d odd fast, %d odd refused", plainFast, plain, oddFast, oddRefused)
	}
}

// TestReadResponseFallsBack lists documents the fast path must leave to
// json.Unmarshal, because json.Unmarshal reads them differently from a
// plain reading or refuses them.
func TestReadResponseFallsBack(t *testing.T) {
	for _, doc := range []string{
		`{"Data":[{"index":0,"embedding":[1]}]}`,                   // matched case-insensitively
		`{"data":[{"INDEX":0,"embedding":[1]}]}`,                   // likewise
		`{"data":[{"index":0,"Embedding":[1]}]}`,                   // likewise
		`{"data":[],"data":[{"index":0,"embedding":[1]}]}`,         // the last one wins
		`{"data":[{"index":0,"index":1,"embedding":[1]}]}`,         // likewise
		`{"d\u0061ta":[{"index":0,"embedding":[1]}]}`,              // an escaped name
		`{"data":[{"index":1.0,"embedding":[1]}]}`,                 // not an int
		`{"data":[{"index":9999999999999999999,"embedding":[1]}]}`, // out of range
		`{"data":[{"index":0,"embedding":[1e400]}]}`,               // out of float64 range
		`{"data":[{"index":0,"embedding":["1"]}]}`,                 // a string element
		`{"data":[null]}`, // a null item
		`{"data":null}`,   // no array
		`null`,            // no object
		`{"data":[{"index":0,"embedding":[1]}]} x`,                                    // trailing bytes
		`{"data":[{"index":0,"embedding":[1]}],"x":"\q"}`,                             // a bad escape
		`{"data":[{"index":0,"embedding":[01]}]}`,                                     // a leading zero
		`{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `,"data":[]}`, // deep
		"\xef\xbb\xbf{\"data\":[]}",                                                   // a byte order mark
	} {
		if _, ok := readResponse([]byte(doc), 0); ok {
			t.Errorf("fast path accepted %q", doc)
		}
		checkReadResponse(t, []byte(doc), "fixed case")
	}
}

// FuzzReadResponseMatchesUnmarshal checks the differential on any input.
func FuzzReadResponseMatchesUnmarshal(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 40 {
		f.Add([]byte(genResponse(r, i%2 == 1)))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkReadResponse(t, raw, "fuzz input")
	})
}

// checkFloat compares respParser.float with strconv.ParseFloat on text:
// the same bits whenever float reports its value exact, and the same
// extent of the number as the JSON grammar's (number).
func checkFloat(t *testing.T, text, repro string) {
	t.Helper()
	p := respParser{b: []byte(text)}
	f, exact := p.float()
	q := respParser{b: []byte(text)}
	valid := q.number()
	if !valid && p.i != 0 || valid && p.i != q.i {
		t.Fatalf("%s: %q: float read %d bytes, the grammar %d (valid %v)", repro, text, p.i, q.i, valid)
	}
	if !exact {
		return
	}
	want, err := strconv.ParseFloat(text[:p.i], 64)
	if err != nil || math.Float64bits(f) != math.Float64bits(want) {
		t.Fatalf("%s: %q: float %v (%x), strconv.ParseFloat %v (%x) %v", repro, text[:p.i], f, math.Float64bits(f), want, math.Float64bits(want), err)
	}
}

// genNumber writes a seeded number in one of the forms embedding servers
// use, or a random digit string with a random point and exponent.
func genNumber(r *rand.Rand) string {
	x := r.NormFloat64() * math.Pow(10, float64(r.IntN(50)-25))
	switch r.IntN(8) {
	case 0:
		return strconv.FormatFloat(float64(float32(x)), 'g', -1, 32)
	case 1:
		return strconv.FormatFloat(float64(float32(x)), 'f', -1, 32)
	case 2:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case 3:
		return strconv.FormatFloat(x, 'e', r.IntN(20), 64)
	case 4:
		return strconv.FormatFloat(x, 'f', r.IntN(30), 64)
	case 5:
		return strconv.FormatFloat(x, 'g', 17, 64)
	}
	var b strings.Builder
	if r.IntN(2) == 0 {
		b.WriteByte('-')
	}
	if r.IntN(3) == 0 {
		b.WriteByte('0')
	} else {
		b.WriteByte(byte('1' + r.IntN(9)))
		for range r.IntN(18) {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if r.IntN(2) == 0 {
		b.WriteByte('.')
		for range 1 + r.IntN(20) {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if r.IntN(2) == 0 {
		b.WriteString([]string{"e", "E", "e+", "e-", "E-"}[r.IntN(5)])
		b.WriteString(strconv.Itoa(r.IntN(40)))
	}
	return b.String()
}

// TestFloatMatchesParseFloat compares the exact path with strconv on
// seeded numbers, and checks that the usual forms take it.
func TestFloatMatchesParseFloat(t *testing.T) {
	const seed, n = 384, 200000
	r := rand.New(rand.NewPCG(seed, 2))
	for i := range n {
		checkFloat(t, genNumber(r), fmt.Sprintf("seed %d number %d (go test -run TestFloatMatchesParseFloat ./embedding/)", seed, i))
	}
	for _, s := range []string{"0", "-0", "0.0", "-0.0e5", "1", "-1", "0.1", "1e22", "1e-22", "9007199254740993", "123456789012345",
		"1234567890123456", "0.30000000000000004", "1e23", "4.9e-324", "1.7976931348623157e308", "1e0001", "01", "1.", ".5", "-", "1e", "1e+", "--1", "1.e3"} {
		checkFloat(t, s, "fixed case")
	}
	exact := 0
	for range 1000 {
		x := float32(r.NormFloat64() / 20)
		p := respParser{b: strconv.AppendFloat(nil, float64(x), 'g', -1, 32)}
		if _, ok := p.float(); ok {
			exact++
		}
	}
	if exact < 990 { // the form encoding/json gives a []float32
		t.Fatalf("only %d of 1000 shortest float32 texts took the exact path", exact)
	}
}

// FuzzFloatMatchesParseFloat checks the exact path on any text.
func FuzzFloatMatchesParseFloat(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 5))
	for range 40 {
		f.Add(genNumber(r))
	}
	f.Fuzz(func(t *testing.T, s string) { checkFloat(t, s, "fuzz input") })
}

// BenchmarkReadResponse decodes one answer holding a 384-dimension
// float32 vector as encoding/json writes it: the fast path, and
// json.Unmarshal (the fallback, and the decoder before it); and the fast
// path over the same vector in base64.
func BenchmarkReadResponse(b *testing.B) {
	r := rand.New(rand.NewPCG(384, 1))
	v := make([]float32, 384)
	for i := range v {
		v[i] = float32(r.NormFloat64() / 20)
	}
	raw, _ := json.Marshal(map[string]any{"object": "list", "model": "bench",
		"data": []any{map[string]any{"object": "embedding", "index": 0, "embedding": v}}})
	packed := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(packed[4*i:], math.Float32bits(x))
	}
	raw64, _ := json.Marshal(map[string]any{"object": "list", "model": "bench",
		"data": []any{map[string]any{"object": "embedding", "index": 0, "embedding": base64.StdEncoding.EncodeToString(packed)}}})
	b.Run("fast-base64", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw64)))
		for b.Loop() {
			if _, ok := readResponse(raw64, 384); !ok {
				b.Fatal("fell back")
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, ok := readResponse(raw, 384); !ok {
				b.Fatal("fell back")
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var r embedResponse
			if err := json.Unmarshal(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestReadBodyMatchesReadAll checks that readBody returns what
// io.ReadAll of the same io.LimitReader returns, whatever Content-Length
// the server announced, and that a buffer sized by the announced length
// is not grown again.
func TestReadBodyMatchesReadAll(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, size := range []int{0, 1, 511, 512, 4700, 70000} {
		body := make([]byte, size)
		for i := range body {
			body[i] = byte('a' + r.IntN(26))
		}
		for _, cl := range []int64{-1, 0, int64(size), int64(size) / 2, int64(size) * 2, 1 << 40} {
			for _, hint := range []int{0, 100, 1 << 30} {
				got, err := readBody(strings.NewReader(string(body)), cl, hint)
				if err != nil || string(got) != string(body) {
					t.Fatalf("size %d content-length %d hint %d: %d bytes, %v", size, cl, hint, len(got), err)
				}
			}
		}
	}
	body := strings.Repeat("x", 4700)
	allocs := testing.AllocsPerRun(20, func() { _, _ = readBody(strings.NewReader(body), int64(len(body)), 0) })
	if allocs > 3 { // the buffer, its bytes.Buffer and the LimitedReader at most
		t.Fatalf("readBody made %v allocations for an answer of announced length", allocs)
	}
}

// TestRequestBodyMatchesMarshal: the hand-written request encoder
// writes what json.Marshal writes, on seeded requests whose strings mix
// every byte JSON escapes, invalid UTF-8 and U+2028, with and without
// the optional members, and nil, empty and long inputs.
func TestRequestBodyMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	pieces := []string{"a", "query text ", "<", ">", "&", `"`, `\`, "\n", "\t", "\x00", "\x1f", "\x7f", "é", "😀", "\u2028", "\u2029", "\xff", "\xe2\x80"}
	str := func() string {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := range 3000 {
		req := embedRequest{Model: str(), EncodingFormat: str()}
		switch r.IntN(4) {
		case 0:
		case 1:
			req.Input = []string{}
		default:
			for range 1 + r.IntN(6) {
				req.Input = append(req.Input, str())
			}
		}
		if r.IntN(2) == 0 {
			req.EmbeddingTypes = []string{"int8"}
		}
		if r.IntN(2) == 0 {
			req.InputType = str()
		}
		want, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := req.appendJSON(nil); string(got) != string(want) {
			t.Fatalf("request %d %+v: wrote %s, json.Marshal %s", i, req, got, want)
		}
	}
}
