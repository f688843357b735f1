package embedding

// Response validation against FAKE embedding servers (httptest) that
// return scripted, deliberately malformed payloads.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// raw returns a respond func that writes body verbatim with status 200.
func raw(body string) func(int, http.ResponseWriter, embedRequest) bool {
	return func(_ int, w http.ResponseWriter, _ embedRequest) bool {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
		return true
	}
}

func TestFakeBadResponses(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		n          int
		wantDim    *DimensionError
	}{
		{"wrong dimension", `{"data":[{"index":0,"embedding":[1,2,3]}]}`, 1, &DimensionError{Index: 0, Want: 4, Got: 3}},
		{"second vector wrong dimension", `{"data":[{"index":1,"embedding":[1,2,3,4]},{"index":0,"embedding":[1,2,3,4,5]}]}`, 2, &DimensionError{Index: 0, Want: 4, Got: 5}},
		{"NaN literal", `{"data":[{"index":0,"embedding":[1,NaN,3,4]}]}`, 1, nil},
		{"overflows float32", `{"data":[{"index":0,"embedding":[1,1e39,3,4]}]}`, 1, nil},
		{"too few vectors", `{"data":[{"index":0,"embedding":[1,2,3,4]}]}`, 2, nil},
		{"repeated index", `{"data":[{"index":0,"embedding":[1,2,3,4]},{"index":0,"embedding":[1,2,3,4]}]}`, 2, nil},
		{"index out of range", `{"data":[{"index":5,"embedding":[1,2,3,4]}]}`, 1, nil},
		{"empty vector", `{"data":[{"index":0,"embedding":[]}]}`, 1, nil},
		{"not JSON", `<html>`, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.respond = raw(tc.body)
			o := newClient(t, f.URL, nil)
			_, err := o.Embed(context.Background(), texts(tc.n), "")
			assertErr(t, err, rcp.CodeInternalError, false)
			if len(f.requests()) != 1 {
				t.Errorf("bad response retried: %d calls", len(f.requests()))
			}
			var de *DimensionError
			if got := errors.As(err, &de); got != (tc.wantDim != nil) || (got && *de != *tc.wantDim) {
				t.Errorf("DimensionError = %+v, want %+v", de, tc.wantDim)
			}
		})
	}
}

func TestFakeLearnsDimension(t *testing.T) {
	f := newFake(t)
	f.dim = 7
	o := newClient(t, f.URL, func(p *OpenAIOptions) { p.Dimension = 0 })
	if o.Dimension() != 0 {
		t.Fatalf("Dimension before first call = %d, want 0", o.Dimension())
	}
	if err := o.Probe(context.Background()); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if o.Dimension() != 7 {
		t.Fatalf("learned Dimension = %d, want 7", o.Dimension())
	}
	f.dim = 3 // the model was swapped behind our back
	_, err := o.Embed(context.Background(), texts(1), "")
	var de *DimensionError
	if !errors.As(err, &de) || de.Want != 7 || de.Got != 3 || Code(err) != rcp.CodeInternalError {
		t.Fatalf("after swap: %v (DimensionError %+v)", err, de)
	}
}

func TestFakeConcurrentUse(t *testing.T) {
	f := newFake(t)
	o := newClient(t, f.URL, func(p *OpenAIOptions) { p.BatchSize = 5; p.Dimension = 0 })
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			in := texts(11 + g)
			got, err := o.Embed(context.Background(), in, "")
			if err == nil && len(got) != len(in) {
				err = fmt.Errorf("goroutine %d: %d vectors for %d texts", g, len(got), len(in))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if o.Dimension() != fakeDim {
		t.Errorf("Dimension = %d, want %d", o.Dimension(), fakeDim)
	}
}

func TestFakeInvalidKind(t *testing.T) {
	f := newFake(t)
	o := newClient(t, f.URL, nil)
	_, err := o.Embed(context.Background(), texts(1), "passage")
	e := assertErr(t, err, rcp.CodeInvalidParams, false)
	if e.Data == nil || e.Data.Field != "kind" || len(f.requests()) != 0 {
		t.Errorf("data %+v, %d calls", e.Data, len(f.requests()))
	}
}

func TestNewOpenAIValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts OpenAIOptions
		ok   bool
	}{
		{"ok", OpenAIOptions{BaseURL: "http://127.0.0.1:1", Model: "m"}, true},
		{"no url", OpenAIOptions{Model: "m"}, false},
		{"bad scheme", OpenAIOptions{BaseURL: "ftp://x", Model: "m"}, false},
		{"no model", OpenAIOptions{BaseURL: "http://x"}, false},
		{"negative dim", OpenAIOptions{BaseURL: "http://x", Model: "m", Dimension: -1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := NewOpenAI(tc.opts)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && (o.BatchLimit() != DefaultBatchSize || o.Identity() != "m") {
				t.Errorf("defaults: batch %d identity %q", o.BatchLimit(), o.Identity())
			}
		})
	}
}

func TestCodeOfPlainErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want rcp.Code
	}{
		{"nil", nil, 0},
		{"deadline", context.DeadlineExceeded, rcp.CodeTimeout},
		{"wrapped deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), rcp.CodeTimeout},
		{"cancel", context.Canceled, rcp.CodeCancelled},
		{"refused", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, rcp.CodeBackendUnavailable},
		{"rcp error", rcp.NewError(rcp.CodeRateLimited, "x"), rcp.CodeRateLimited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Code(tc.err); got != tc.want {
				t.Errorf("Code = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFakeEchoedKeyScrubbed: a FAKE server echoes the request's
// Authorization header in its error body, straddling the 256-byte cut of
// the snippet kept for logs: the error holds neither the key nor the
// prefix of it the cut would have left.
func TestFakeEchoedKeyScrubbed(t *testing.T) {
	const key = "sk-echoed-0123456789abcdef"
	f := newFake(t)
	f.respond = func(_ int, w http.ResponseWriter, _ embedRequest) bool {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, strings.Repeat("x", 217)+" Authorization: Bearer "+key)
		return true
	}
	o := newClient(t, f.URL, func(p *OpenAIOptions) { p.APIKey = key })
	_, err := o.Embed(context.Background(), texts(1), "")
	if err == nil || strings.Contains(err.Error(), key[:12]) {
		t.Fatalf("err = %v, want an error without the key or its prefix", err)
	}
}
