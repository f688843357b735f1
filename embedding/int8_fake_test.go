package embedding

// Tests in this file run against FAKE embedding servers (httptest): a
// hostile or careless upstream answering an int8 request.

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func int8Client(t *testing.T, f *fakeServer) *OpenAI {
	return newClient(t, f.URL, func(o *OpenAIOptions) { o.Element = capability.ElementInt8 })
}

// TestInt8Request: an int8 embedder asks for int8 in both spellings and
// returns the integers it was sent.
func TestInt8Request(t *testing.T) {
	f := newFake(t)
	want := []float64{-128, 0, 5, 127}
	f.respond = func(_ int, w http.ResponseWriter, req embedRequest) bool {
		writeJSON(w, map[string]any{"data": []map[string]any{{"index": 0, "embedding": want}}})
		return true
	}
	e := int8Client(t, f)
	if e.Element() != capability.ElementInt8 {
		t.Fatalf("Element = %q", e.Element())
	}
	vs, err := e.Embed(context.Background(), []string{"x"}, KindQuery)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if float64(vs[0][i]) != w {
			t.Errorf("component %d = %g, want %g", i, vs[0][i], w)
		}
	}
	got := f.reqs[0].Body
	if got.EncodingFormat != "int8" || !slices.Equal(got.EmbeddingTypes, []string{"int8"}) {
		t.Errorf("request asked encoding_format %q, embedding_types %v; want int8 in both", got.EncodingFormat, got.EmbeddingTypes)
	}
	if def := newClient(t, f.URL, nil); def.Element() != capability.ElementFloat {
		t.Errorf("default Element = %q, want float", def.Element())
	}
}

// TestInt8RangeChecked: every value of an int8 answer must be an integer
// in [-128, 127]; anything else (the server ignored the request, or lies)
// is -32603 and no vector is returned.
func TestInt8RangeChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		vec  string
	}{
		{"floats (request ignored)", `[0.12, -0.03, 0.5, 0.01]`},
		{"above 127", `[1, 2, 128, 4]`},
		{"below -128", `[1, -129, 3, 4]`},
		{"huge", `[1, 2, 3, 1e300]`},
		{"fraction of an integer", `[1, 2, 3, 4.0000001]`},
		{"uint8", `[0, 200, 255, 3]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.respond = func(_ int, w http.ResponseWriter, _ embedRequest) bool {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":` + tc.vec + `}]}`))
				return true
			}
			vs, err := int8Client(t, f).Embed(context.Background(), []string{"x"}, KindQuery)
			if vs != nil || Code(err) != rcp.CodeInternalError || !strings.Contains(err.Error(), "int8") {
				t.Fatalf("got %v, %v; want -32603 naming int8", vs, err)
			}
		})
	}
}

func TestElementValidated(t *testing.T) {
	_, err := NewOpenAI(OpenAIOptions{BaseURL: "http://127.0.0.1:1", Model: "m", Element: "uint8"})
	if err == nil || !strings.Contains(err.Error(), "Element") {
		t.Fatalf("uint8 element accepted: %v", err)
	}
}
