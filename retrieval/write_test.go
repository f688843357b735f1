package retrieval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// blocking waits for ctx before searching, like a slow engine.
type blocking struct{ adapters.Adapter }

func (b blocking) Search(ctx context.Context, _ *adapters.Plan) (*adapters.Candidates, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// limited fails every search with a rate-limit error carrying a hint.
type limited struct{ adapters.Adapter }

type rateErr struct{}

func (rateErr) Error() string       { return "secret-host:9200 said 429" }
func (rateErr) RetryAfterMs() int64 { return 1500 }

func (limited) Search(context.Context, *adapters.Plan) (*adapters.Candidates, error) {
	return nil, rateErr{}
}

func (limited) ErrorCode(err error) rcp.Code {
	if errors.As(err, new(rateErr)) {
		return rcp.CodeRateLimited
	}
	return rcp.CodeInternalError
}

func TestCancelAndDeadline(t *testing.T) {
	e, _ := newEngine(t, setup{emb: true, wrap: func(a adapters.Adapter) adapters.Adapter { return blocking{a} }})
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel(errors.New("client cancelled")) }()
	_, err := e.Retrieve(ctx, params(t, `{"query":"solar","k":3}`))
	wantErr(t, err, rcp.CodeCancelled, "", "")

	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer dcancel()
	_, err = e.Retrieve(dctx, params(t, `{"query":"solar","k":3,"mode":"sparse"}`))
	wantErr(t, err, rcp.CodeTimeout, "", "")
	if re := err.(*rcp.Error); re.Data == nil || re.Data.Retryable == nil || !*re.Data.Retryable {
		t.Errorf("timeout not retryable: %+v", re.Data)
	}
}

func TestAdapterErrorMapping(t *testing.T) {
	e, _ := newEngine(t, setup{wrap: func(a adapters.Adapter) adapters.Adapter { return limited{a} }})
	_, err := e.Retrieve(context.Background(), params(t, `{"query":"solar","k":3}`))
	wantErr(t, err, rcp.CodeRateLimited, "", "")
	re := err.(*rcp.Error)
	if re.Data.Retryable == nil || !*re.Data.Retryable || re.Data.RetryAfterMs == nil || *re.Data.RetryAfterMs != 1500 {
		t.Errorf("data %+v", re.Data)
	}
	wire, _ := json.Marshal(re)
	if strings.Contains(string(wire), "secret-host") {
		t.Errorf("engine text leaked to the client: %s", wire)
	}
}

func TestEmbed(t *testing.T) {
	e, _ := newEngine(t, setup{emb: true, policy: capabilityEmbedLimit(3)})
	ctx := context.Background()
	decode := func(js string) *rcp.EmbedParams {
		var p rcp.EmbedParams
		if err := json.Unmarshal([]byte(js), &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	res, err := e.Embed(ctx, decode(`{"inputs":["solar power",{"type":"text","text":"wind"}],"kind":"query"}`))
	if err != nil {
		t.Fatal(err)
	}
	vs := res.Vectors.([][]float32)
	fe := &fakeEmbedder{dim: dim}
	if len(vs) != 2 || !slices.Equal(vs[0], fe.vec("solar power")) || res.Dimension != dim || res.Encoding != "json" {
		t.Errorf("json result %+v", res)
	}
	res, err = e.Embed(ctx, decode(`{"texts":["solar power"],"encoding":"f32-base64"}`))
	if err != nil {
		t.Fatal(err)
	}
	blob := res.Vectors.([]string)
	v, derr := rankmath.DecodeF32(blob[0], res.Dimension)
	if derr != nil || res.Encoding != "f32-base64" || !slices.Equal(v, fe.vec("solar power")) {
		t.Errorf("f32 result %+v (%v)", res, derr)
	}
	tests := []struct {
		req           string
		code          rcp.Code
		option, field string
	}{
		{`{"inputs":[]}`, rcp.CodeInvalidParams, "", "inputs"},
		{`{"inputs":["a","b","c","d"]}`, rcp.CodePayloadTooLarge, "", "inputs"},
		{`{"inputs":[{"type":"image","mimeType":"image/png","data":"AA=="}]}`, rcp.CodeOptionUnsupported, "image", ""},
		{`{"inputs":["a"],"encoding":"f16"}`, rcp.CodeOptionUnsupported, "f16", ""},
		{`{"inputs":["a"],"kind":"passage"}`, rcp.CodeInvalidParams, "", "kind"},
		{`{"inputs":["a",null]}`, rcp.CodeInvalidParams, "", "inputs[1]"},
		{`{"texts":[[]]}`, rcp.CodeInvalidParams, "", "texts[0]"},
		{`{"inputs":["a",{"text":"untyped"}]}`, rcp.CodeInvalidParams, "", "inputs[1]"},
		{`{"inputs":[[{"type":"text","text":"a"},{}]]}`, rcp.CodeInvalidParams, "", "inputs[0][1]"},
	}
	for _, tc := range tests {
		_, err := e.Embed(ctx, decode(tc.req))
		wantErr(t, err, tc.code, tc.option, tc.field)
	}
}

func TestIndexAddDelete(t *testing.T) {
	e, store := newEngine(t, setup{emb: true, writable: true})
	ctx := context.Background()
	before := store.Len()
	add := &rcp.IndexAddParams{Documents: []rcp.Document{
		{ID: "n1", Text: "geothermal heat pumps", Meta: map[string]any{"lang": "en"}},
		{Text: "tidal energy"},
		{ID: "n1", Text: "geothermal heat pumps"},
	}}
	res, err := e.IndexAdd(ctx, add)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.IDs) != 3 || res.IDs[0] != "n1" || res.IDs[2] != "n1" || len(res.IDs[1]) != 36 {
		t.Fatalf("ids %v", res.IDs)
	}
	if _, err := e.IndexAdd(ctx, add); err != nil {
		t.Fatal(err)
	}
	if store.Len() != before+3 { // n1 once, two minted ids (no id is not idempotent, §7.10)
		t.Errorf("len %d, want %d", store.Len(), before+3)
	}
	hit := retrieve(t, e, `{"query":"geothermal","k":1,"mode":"dense"}`)
	if len(hit.Hits) != 1 || hit.Hits[0].ID != "n1" {
		t.Errorf("written doc not found by dense (embedded as document): %v", hitIDs(hit.Hits))
	}
	for _, want := range []int{1, 0} {
		del, err := e.IndexDelete(ctx, &rcp.IndexDeleteParams{IDs: []string{"n1", "ghost"}})
		if err != nil || del.Deleted != want {
			t.Errorf("delete = %+v, %v; want %d", del, err, want)
		}
	}
	long := strings.Repeat("x", retrieval.MaxIDBytes+1)
	_, err = e.IndexAdd(ctx, &rcp.IndexAddParams{Documents: []rcp.Document{{ID: "ok", Text: "a"}, {ID: long, Text: "b"}}})
	wantErr(t, err, rcp.CodeInvalidParams, "", "documents[1].id")
	_, err = e.IndexAdd(ctx, &rcp.IndexAddParams{Documents: []rcp.Document{{Text: "a"}}, Chunk: new(true)})
	wantErr(t, err, rcp.CodeOptionUnsupported, "chunk", "")
	_, err = e.IndexDelete(ctx, &rcp.IndexDeleteParams{IDs: []string{""}})
	wantErr(t, err, rcp.CodeInvalidParams, "", "ids[0]")
}

func TestIndexNotWritable(t *testing.T) {
	e, _ := newEngine(t, setup{})
	if e.Capabilities().Index != nil {
		t.Fatal("read-only store advertised index")
	}
	_, err := e.IndexAdd(context.Background(), &rcp.IndexAddParams{Documents: []rcp.Document{{Text: "a"}}})
	wantErr(t, err, rcp.CodeCapabilityMissing, "", "")
}

func BenchmarkMemoryRetrieve(b *testing.B) {
	s := newStore(nil, false, "")
	words := strings.Fields("solar wind water heat power grid cell panel battery storage turbine dam fission energy")
	for i := range 1000 {
		text := make([]string, 0, 30)
		for j := range 30 {
			text = append(text, words[(i*7+j*j)%len(words)])
		}
		s.Add(adapters.Document{ID: fmt.Sprintf("d%04d", i), Text: strings.Join(text, " ")})
	}
	e, err := retrieval.NewEngine(context.Background(), s, retrieval.Options{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	p := params(b, `{"query":"solar battery storage","k":10,"mode":"sparse"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Retrieve(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

func capabilityEmbedLimit(n int) capability.Policy { return capability.Policy{EmbedBatchLimit: n} }

// upsertRecorder records the documents index/add hands the adapter.
type upsertRecorder struct {
	adapters.Adapter
	w    adapters.Writer
	docs []adapters.Document
}

func (u *upsertRecorder) Upsert(ctx context.Context, docs []adapters.Document) error {
	u.docs = append(u.docs, docs...)
	return u.w.Upsert(ctx, docs)
}

func (u *upsertRecorder) Delete(ctx context.Context, ids []string) (int, error) {
	return u.w.Delete(ctx, ids)
}

// TestIndexAddNamesVectorField: the Engine tells the adapter which field
// an embedded document vector belongs in, the dense field (the one whose
// dimension and element type are the embedder's), not whichever vector
// field the adapter lists first.
func TestIndexAddNamesVectorField(t *testing.T) {
	var rec *upsertRecorder
	e, _ := newEngine(t, setup{emb: true, writable: true, wrap: func(a adapters.Adapter) adapters.Adapter {
		rec = &upsertRecorder{Adapter: a, w: a.(adapters.Writer)}
		return rec
	}})
	if _, err := e.IndexAdd(context.Background(), &rcp.IndexAddParams{Documents: []rcp.Document{{ID: "v1", Text: "wind"}}}); err != nil {
		t.Fatal(err)
	}
	dense := capability.DenseField(e.Evidence(), capability.Policy{EmbedDim: dim})
	if dense == nil || len(rec.docs) != 1 || rec.docs[0].VectorField != dense.Name || len(rec.docs[0].Vector) != dim {
		t.Fatalf("upserted %+v, want the vector named for dense field %+v", rec.docs, dense)
	}
}
