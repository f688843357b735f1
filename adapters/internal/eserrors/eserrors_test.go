package eserrors

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func TestGeneric(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code rcp.Code
		ok   bool
	}{
		{"nil", nil, rcp.CodeInternalError, true},
		{"rcp error", fmt.Errorf("wrapped: %w", rcp.NewError(rcp.CodeConflict, "x")), rcp.CodeConflict, true},
		{"rcp error without a valid code", &rcp.Error{Code: 12345}, 0, false},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), rcp.CodeCancelled, true},
		{"deadline", context.DeadlineExceeded, rcp.CodeTimeout, true},
		{"other", errors.New("boom"), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ok := Generic(tc.err)
			if code != tc.code || ok != tc.ok {
				t.Fatalf("Generic = %v, %v; want %v, %v", code, ok, tc.code, tc.ok)
			}
		})
	}
}

func TestHasAny(t *testing.T) {
	if !HasAny([]string{"a", "b"}, []string{"c", "b"}) {
		t.Fatal("missed a shared type")
	}
	if HasAny([]string{"a"}, []string{"b"}) || HasAny(nil, []string{"b"}) || HasAny([]string{"a"}, nil) {
		t.Fatal("found a type that is not there")
	}
}

func TestAlreadyExists(t *testing.T) {
	nested := &dsl.ErrorCause{Type: "wrapper", CausedBy: &dsl.ErrorCause{Type: "resource_already_exists_exception"}}
	if !AlreadyExists(nested) {
		t.Fatal("nested resource_already_exists_exception not found")
	}
	if AlreadyExists(nil) || AlreadyExists(&dsl.ErrorCause{Type: "index_not_found_exception"}) {
		t.Fatal("false positive")
	}
}

func TestRetryAfter(t *testing.T) {
	for h, want := range map[string]time.Duration{"3": 3 * time.Second, "0": 0, "-1": 0, "soon": 0, "": 0} {
		hdr := http.Header{}
		if h != "" {
			hdr.Set("Retry-After", h)
		}
		if got := RetryAfter(hdr); got != want {
			t.Errorf("Retry-After %q = %v, want %v", h, got, want)
		}
	}
}
