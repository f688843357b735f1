package retrieval_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// taxonomyFrames are valid and malformed frames for every method family;
// they seed FuzzEngineStdio and drive TestErrorTaxonomy.
var taxonomyFrames = []string{
	`{"jsonrpc":"2.0","id":"pre","method":"retrieve","params":{"query":"solar","k":1}}`,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"capabilities":{"log":{}},"_meta":{"logLevel":"debug"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"solar","k":3,"_meta":{"progressToken":1}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"retrieve","params":{"query":"solar","k":9007199254740993}}`,
	`{"jsonrpc":"2.0","id":3,"method":"retrieve","params":{"query":"solar","k":0}}`,
	`{"jsonrpc":"2.0","id":4,"method":"retrieve","params":{"query":"solar","k":5,"candidateK":2}}`,
	`{"jsonrpc":"2.0","id":5,"method":"retrieve","params":{"query":"solar","k":2,"mode":"colbert"}}`,
	`{"jsonrpc":"2.0","id":6,"method":"retrieve","params":{"query":"solar","k":2,"rerank":{"method":"llm","topN":1}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"retrieve","params":{"query":"solar","k":2,"filter":{"field":"year","op":"contains","value":1}}}`,
	`{"jsonrpc":"2.0","id":8,"method":"retrieve","params":{"query":"solar","k":2,"filter":{"field":"year","op":"gt","value":"x"}}}`,
	`{"jsonrpc":"2.0","id":9,"method":"retrieve","params":{"query":"solar","k":2,"filter":{"or":[]}}}`,
	`{"jsonrpc":"2.0","id":10,"method":"retrieve","params":{"query":"solar","k":2,"filter":{"field":"lang","op":"regex","value":"x"}}}`,
	`{"jsonrpc":"2.0","id":11,"method":"retrieve","params":{"query":{"type":"image","mimeType":"image/png","data":"AA=="},"k":2}}`,
	`{"jsonrpc":"2.0","id":12,"method":"retrieve","params":{"query":"solar","k":2,"cursor":"zzz"}}`,
	`{"jsonrpc":"2.0","id":13,"method":"retrieve","params":{"query":"solar","k":2,"tokenBudget":5,"minScore":0.1,"mmr":{"lambda":0.3},"strict":false,"unit":"page"}}`,
	`{"jsonrpc":"2.0","id":14,"method":"retrieve","params":{"query":"solar","k":2,"mode":"hybrid","fusion":{"method":"convex","alpha":1.5}}}`,
	`{"jsonrpc":"2.0","id":15,"method":"retrieve","params":{"query":"solar","k":2,"fusion":{"weights":{"dense":-1}},"mode":"hybrid"}}`,
	`{"jsonrpc":"2.0","id":16,"method":"retrieve","params":["solar"]}`,
	`{"jsonrpc":"2.0","id":17,"method":"retrieve","params":{"k":2}}`,
	`{"jsonrpc":"2.0","id":18,"method":"embed","params":{"inputs":["a",{"type":"text","text":"b"}],"encoding":"f32-base64"}}`,
	`{"jsonrpc":"2.0","id":19,"method":"embed","params":{"texts":[]}}`,
	`{"jsonrpc":"2.0","id":20,"method":"embed","params":{"inputs":["a"],"encoding":"int8"}}`,
	`{"jsonrpc":"2.0","id":21,"method":"embed","params":{"inputs":[{"type":"image","uri":"https://x/y.png","mimeType":"image/png"}]}}`,
	`{"jsonrpc":"2.0","id":22,"method":"index/add","params":{"documents":[{"id":"n1","text":"tidal"},{"text":"wave"}]}}`,
	`{"jsonrpc":"2.0","id":23,"method":"index/add","params":{"documents":[{"id":"","text":"x"}]}}`,
	`{"jsonrpc":"2.0","id":24,"method":"index/add","params":{"documents":[{"text":"x"}],"chunk":true}}`,
	`{"jsonrpc":"2.0","id":25,"method":"index/delete","params":{"ids":["n1","n1","nope"]}}`,
	`{"jsonrpc":"2.0","id":26,"method":"index/delete","params":{"ids":[5]}}`,
	`{"jsonrpc":"2.0","id":27,"method":"rerank","params":{"query":"q","passages":["a"]}}`,
	`{"jsonrpc":"2.0","id":28,"method":"graph","params":{"op":"local"}}`,
	`{"jsonrpc":"2.0","id":29,"method":"x-acme/boost","params":{}}`,
	`{"jsonrpc":"2.0","id":30,"method":"initialize","params":{"protocolVersion":1}}`,
	`{"jsonrpc":"2.0","id":31,"method":"ping","params":{"nonce":[1]}}`,
	`{"jsonrpc":"2.0","id":32,"method":"retrieve","params":{"query":"solar","k":2,"level":-1,"seed":3}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}}`,
	`{"jsonrpc":"2.0","method":"notifications/zzz"}`,
	`[{"jsonrpc":"2.0","id":"b1","method":"ping","params":{"nonce":1.5}},{"jsonrpc":"2.0","id":"b2","method":"retrieve","params":{"query":"wind","k":1}},7]`,
	`[]`,
	`{"jsonrpc":"2.0","id":33,"method":"retrieve","params":{"query":"solar"`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":34,"method":"info"}`,
	`{"jsonrpc":"2.0","id":36,"method":"retrieve","params":{"query":[{}],"k":1}}`,
	`{"jsonrpc":"2.0","id":37,"method":"embed","params":{"inputs":[{"text":"x"},null]}}`,
	`{"jsonrpc":"2.0","id":35,"method":"shutdown"}`,
}

// serveEngine runs one stdio session over e with input and returns the
// output lines; EOF drains in-flight requests (§5.1).
func serveEngine(t testing.TB, e *retrieval.Engine, input string) [][]byte {
	var out bytes.Buffer
	srv := server.New(e, server.Options{MaxBatch: 8, MaxLineBytes: 1 << 16})
	if err := srv.ServeStdio(context.Background(), strings.NewReader(input), &out); err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	return lines
}

// checkTaxonomy asserts the §12 invariants on every frame the server wrote:
// schema-valid; each error code in the §12 table, never 0; -32602 names
// data.field, -32005 data.option; -32010/-32011/-32014 are retryable; and
// with unique, each request id answered at most once (inputs that reuse
// ids after an answer may see them twice). It returns the codes seen.
func checkTaxonomy(t testing.TB, lines [][]byte, unique bool) map[rcp.Code]int {
	seen := map[rcp.Code]int{}
	answered := map[string]int{}
	for _, l := range lines {
		if err := rcptest.ValidateFrame(l); err != nil {
			t.Fatalf("frame violates rcp-1.0.json: %v\n%s", err, l)
		}
		fr, derr := jsonrpc.DecodeFrame(l)
		if derr != nil {
			t.Fatalf("unparseable output %s", l)
		}
		for _, m := range fr.Members {
			if m.Response == nil {
				if m.Request == nil || !m.Request.IsNotification() {
					t.Fatalf("output is neither response nor notification: %s", l)
				}
				continue
			}
			if id := m.Response.ID; unique && !id.IsNull() {
				if answered[id.Key()]++; answered[id.Key()] > 1 {
					t.Fatalf("id %s answered twice", id)
				}
			}
			if m.Response.Error != nil {
				seen[checkError(t, m.Response.Error, l)]++
			}
		}
	}
	return seen
}

func checkError(t testing.TB, w *jsonrpc.WireError, line []byte) rcp.Code {
	code := rcp.Code(w.Code)
	if code == 0 || !code.Valid() {
		t.Fatalf("code %d outside §12: %s", w.Code, line)
	}
	var d rcp.ErrorData
	_ = json.Unmarshal(w.Data, &d)
	switch {
	case code == rcp.CodeInvalidParams && d.Field == "":
		t.Fatalf("-32602 without data.field: %s", line)
	case code == rcp.CodeOptionUnsupported && d.Option == "":
		t.Fatalf("-32005 without data.option: %s", line)
	case code.Retryable() && code != rcp.CodeInternalError && (d.Retryable == nil || !*d.Retryable):
		t.Fatalf("%s without data.retryable: %s", code, line)
	}
	return code
}

func taxonomyEngine(t testing.TB) *retrieval.Engine {
	e, _ := newEngine(t, setup{emb: true, writable: true,
		policy: capability.Policy{Streaming: true, Log: true, Operators: []filterlang.Op{filterlang.OpEq, filterlang.OpGt, filterlang.OpIn}}})
	return e
}

// TestErrorTaxonomy: every error any of the frames provokes through the
// server and the memory Engine is a §12 code with its data conventions,
// and the expected spread of codes actually occurs.
func TestErrorTaxonomy(t *testing.T) {
	seen := checkTaxonomy(t, serveEngine(t, taxonomyEngine(t), strings.Join(taxonomyFrames, "\n")+"\n"), true)
	for _, c := range []rcp.Code{rcp.CodeParseError, rcp.CodeInvalidRequest, rcp.CodeInvalidParams, rcp.CodeNotInitialized,
		rcp.CodeCapabilityMissing, rcp.CodeUnknownMethod, rcp.CodeOptionUnsupported} {
		if seen[c] == 0 {
			t.Errorf("no %s error provoked (seen %v)", c, seen)
		}
	}
}

// FuzzEngineStdio: arbitrary input through the server and the memory
// Engine never crashes and never breaks the §12 invariants.
func FuzzEngineStdio(f *testing.F) {
	init := taxonomyFrames[1] + "\n"
	for _, fr := range taxonomyFrames {
		f.Add(init + fr + "\n")
	}
	e := taxonomyEngine(f)
	f.Fuzz(func(t *testing.T, in string) {
		checkTaxonomy(t, serveEngine(t, e, in), false)
	})
}

// classifiedAs fails every search with an error its ErrorCode maps to code.
type classifiedAs struct {
	adapters.Adapter
	code rcp.Code
}

func (c classifiedAs) Search(context.Context, *adapters.Plan) (*adapters.Candidates, error) {
	return nil, errSecret
}

func (c classifiedAs) ErrorCode(error) rcp.Code { return c.code }

var errSecret = errors.New("secret-host:9200 parsing_exception")

// TestAdapterCodesCarryData: adapter-classified -32005 names an option
// (§12); an adapter's -32602 that names no client field is a server-side
// failure (-32603), never -32602 on the params as a whole; the engine
// text is never sent.
func TestAdapterCodesCarryData(t *testing.T) {
	for _, tc := range []struct {
		code, want    rcp.Code
		field, option string
	}{
		{rcp.CodeInvalidParams, rcp.CodeInternalError, "", ""},
		{rcp.CodeOptionUnsupported, rcp.CodeOptionUnsupported, "", "backend"},
		{0, rcp.CodeInternalError, "", ""},
	} {
		e, _ := newEngine(t, setup{wrap: func(a adapters.Adapter) adapters.Adapter { return classifiedAs{a, tc.code} }})
		_, err := e.Retrieve(context.Background(), params(t, `{"query":"solar","k":1}`))
		wantErr(t, err, tc.want, tc.option, tc.field)
		if strings.Contains(err.Error(), "secret") && strings.Contains(err.(*rcp.Error).Message, "secret") {
			t.Errorf("engine text in message: %v", err)
		}
	}
}

// refusal is a FAKE engine refusal (adapters.Rejection): the engine
// refused either a client value (field) or what the sidecar built.
type refusal struct{ field, reason string }

func (r refusal) Error() string       { return "engine refused: secret-host:9200 " + r.reason }
func (r refusal) Refused() bool       { return true }
func (r refusal) ClientField() string { return r.field }
func (r refusal) Reason() string      { return r.reason }

// refusing fails every search with err, classified as -32602.
type refusing struct {
	adapters.Adapter
	err error
}

func (r refusing) Search(context.Context, *adapters.Plan) (*adapters.Candidates, error) {
	return nil, r.err
}

func (r refusing) ErrorCode(error) rcp.Code { return rcp.CodeInvalidParams }

// TestRefusalBlame: an engine refusing a client value is -32602 naming
// it; refusing what the sidecar built is -32603 with the adapter's safe
// reason in data.detail and a message that says whose fault it was;
// neither is retryable (the same request is refused again).
func TestRefusalBlame(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     refusal
		code    rcp.Code
		field   string
		message string
	}{
		{"client's filter value", refusal{"filter", "number_format_exception: For input string: '…'"}, rcp.CodeInvalidParams, "filter", "the backend rejected the value of filter"},
		{"sidecar's query vector", refusal{"", "illegal_argument_exception: element_type [byte] vectors only support non-decimal values"}, rcp.CodeInternalError, "", "the backend rejected a request the sidecar built"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newEngine(t, setup{wrap: func(a adapters.Adapter) adapters.Adapter { return refusing{a, tc.err} }})
			_, err := e.Retrieve(context.Background(), params(t, `{"query":"solar","k":1}`))
			wantErr(t, err, tc.code, "", tc.field)
			re := err.(*rcp.Error)
			if re.Message != tc.message || re.Data == nil || re.Data.Detail != tc.err.reason || re.AdvisesRetry() {
				t.Errorf("error = %q, data %+v; want message %q and detail %q", re.Message, re.Data, tc.message, tc.err.reason)
			}
			if strings.Contains(re.Message+re.Data.Detail, "secret") {
				t.Errorf("engine text sent: %+v", re)
			}
		})
	}
}
