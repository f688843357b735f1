package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/reranker"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// stubNative is a FAKE native rerank model: its check passes or fails
// deterministically (checkErr); Rerank is never called here.
type stubNative struct{ checkErr error }

func (s *stubNative) Rerank(context.Context, string, []string) ([]float64, error) {
	return nil, errors.New("not called")
}
func (s *stubNative) Method() string     { return "cross-encoder" }
func (s *stubNative) Models() []string   { return []string{"engine-model"} }
func (s *stubNative) MaxCandidates() int { return 50 }
func (s *stubNative) Via() string        { return "stub engine model" }
func (s *stubNative) Check(context.Context) (string, error) {
	if s.checkErr != nil {
		return "", s.checkErr
	}
	return "stub check passed", nil
}

// TestNativeRerankPrecedence: the backend's native model wins over the
// sidecar's reranker section when its check passes; a failing native
// model leaves a working sidecar reranker in place, and with none its
// failure is what probe explains.
func TestNativeRerankPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sidecar     bool
		nativeErr   error
		wantNative  bool
		wantSidecar bool
		wantFailed  string
		wantProof   string
	}{
		{"native only", false, nil, true, false, "", "stub check passed"},
		{"both: native wins", true, nil, true, false, "", "stub check passed"},
		{"native fails, sidecar serves", true, errors.New("model gone"), false, true, "", "the backend's native model failed its check: model gone"},
		{"native fails alone", false, errors.New("model gone"), false, false, "model gone", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &app{cfg: &config.Config{}, log: slog.New(slog.DiscardHandler)}
			if tc.sidecar {
				a.cfg.Reranker = &config.Reranker{URL: overlapReranker(t, false), Model: "overlap-test", MaxCandidates: 20}
			}
			native := &stubNative{checkErr: tc.nativeErr}
			var o retrieval.Options
			if err := a.applyExtras(context.Background(), &o, "b", native); err != nil {
				t.Fatal(err)
			}
			_, isSidecar := o.Reranker.(*reranker.Client)
			isNative := o.Reranker == retrieval.Reranker(native)
			if isNative != tc.wantNative || isSidecar != tc.wantSidecar {
				t.Errorf("reranker %T (native %v, sidecar %v), want native %v sidecar %v", o.Reranker, isNative, isSidecar, tc.wantNative, tc.wantSidecar)
			}
			f := o.Policy.Reranker
			if f == nil {
				t.Fatal("no reranker facts")
			}
			if f.Failed != tc.wantFailed || !strings.Contains(f.Proof, tc.wantProof) {
				t.Errorf("facts failed %q proof %q, want %q / %q", f.Failed, f.Proof, tc.wantFailed, tc.wantProof)
			}
			if tc.wantNative && (f.Via != "stub engine model" || f.Models[0] != "engine-model" || f.MaxCandidates != 50) {
				t.Errorf("native facts %+v", f)
			}
			if tc.wantSidecar && (f.Via != "" || f.Models[0] != "overlap-test") {
				t.Errorf("sidecar facts %+v", f)
			}
		})
	}
}
