package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/adaptertest"
	"github.com/rcp-sidecar/rcp-sidecar/internal/telemetry"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// engineName labels every span and metric in these tests.
const engineName = "mem"

// secretQuery is a query whose text must never reach a log by default.
const secretQuery = "zebra quasar confidential"

var docs = []adapters.Document{
	{ID: "z1", Text: "the zebra grazes on the quasar plain", Meta: map[string]any{"topic": "a"}},
	{ID: "z2", Text: "a confidential memo about zebra herds", Meta: map[string]any{"topic": "b"}},
	{ID: "z3", Text: "quasar light reaches the telescope", Meta: map[string]any{"topic": "a"}},
	{ID: "z4", Text: "ordinary text about nothing special", Meta: map[string]any{"topic": "b"}},
}

// stack is a traced memory engine behind the telemetry decorators.
type stack struct {
	tel     *telemetry.Telemetry
	rec     *tracetest.SpanRecorder
	backend server.Backend
	logs    *syncBuffer
}

type stackOpts struct {
	logBodies bool
	noRecord  bool // no span processor: spans are never recorded
	wrap      func(adapters.Adapter) adapters.Adapter
	endpoint  adapters.Endpoint   // the engine's database attributes (EngineAdapter)
	redactor  *telemetry.Redactor // Options.Redactor
}

func newStack(t *testing.T, o stackOpts) *stack {
	t.Helper()
	s := &stack{rec: tracetest.NewSpanRecorder(), logs: &syncBuffer{}}
	log, err := telemetry.NewLogger(s.logs, "debug", telemetry.FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	opts := telemetry.Options{ServiceName: "test", LogBodies: o.logBodies, Logger: log, Redactor: o.redactor}
	if !o.noRecord {
		opts.SpanProcessor = s.rec
	}
	if s.tel, err = telemetry.New(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.tel.Shutdown(context.Background()) })
	emb := adaptertest.Embedder()
	store := memory.New(memory.Options{Dims: emb.Dimension(), Similarity: capability.SimCosine, Writable: true})
	for _, d := range docs {
		vs, _ := emb.Embed(context.Background(), []string{d.Text}, "document")
		d.Vector = vs[0]
		store.Add(d)
	}
	var a adapters.Adapter = store
	if o.wrap != nil {
		a = o.wrap(a)
	}
	e, err := retrieval.NewEngine(context.Background(), s.tel.EngineAdapter(a, engineName, o.endpoint),
		retrieval.Options{Name: "test", Version: "0", Embedder: emb, Logger: log,
			Policy: capability.Policy{Writable: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	s.backend = s.tel.Backend(e, engineName)
	s.rec.Reset() // drop the start-up probe span
	return s
}

// client is an initialized schema-validating client over the stack.
func (s *stack) client(t *testing.T) *rcptest.Client {
	t.Helper()
	c := rcptest.NewClient(t, s.backend)
	if _, err := c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent logging.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// requestLines returns the decoded "rcp request" JSON log lines.
func (b *syncBuffer) requestLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split([]byte(b.String()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		if m["msg"] == "rcp request" {
			out = append(out, m)
		}
	}
	return out
}

// byName indexes ended spans by name (names are unique per test request).
func byName(spans []sdktrace.ReadOnlySpan) map[string][]sdktrace.ReadOnlySpan {
	m := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		m[s.Name()] = append(m[s.Name()], s)
	}
	return m
}

// failing is an adapter whose Search fails with an error it classifies
// as code.
type failing struct {
	adapters.Adapter
	code rcp.Code
}

var errEngineDown = errors.New("engine down: query was " + secretQuery)

func (f failing) Search(context.Context, *adapters.Plan) (*adapters.Candidates, error) {
	return nil, errEngineDown
}

func (f failing) ErrorCode(err error) rcp.Code {
	if errors.Is(err, errEngineDown) {
		return f.code
	}
	return f.Adapter.ErrorCode(err)
}

// breaker reports a fixed circuit state.
type breaker struct {
	failing
	state string
}

func (b breaker) State() string { return b.state }
