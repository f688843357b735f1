package rcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

// TestAsErrorNeverZero proves the one error boundary never yields code 0 or
// a code outside §12, whatever it is handed.
func TestAsErrorNeverZero(t *testing.T) {
	for name, in := range map[string]error{
		"plain":           io.EOF,
		"context":         context.DeadlineExceeded,
		"zero code":       &Error{Message: "zero"},
		"wrapped zero":    fmt.Errorf("ctx: %w", &Error{Message: "zero"}),
		"wrapped rcp":     fmt.Errorf("ctx: %w", InvalidParams("k", "bad")),
		"joined":          errors.Join(io.EOF, OptionUnsupported("mode", "no")),
		"retryable":       Retryable(CodeRateLimited, 10, "slow"),
		"sentinel":        ErrTimeout,
		"with cause":      ErrBackendUnavailable.WithCause(io.EOF),
		"typed nil cause": (&Error{Code: CodeCancelled}).WithCause(nil),
	} {
		t.Run(name, func(t *testing.T) {
			e := AsError(in)
			if e == nil || e.Code == 0 || !e.Code.Valid() {
				t.Fatalf("AsError(%v) = %+v", in, e)
			}
		})
	}
	if AsError(nil) != nil {
		t.Error("AsError(nil) must be nil")
	}
}

func TestAsErrorKeepsRCPData(t *testing.T) {
	e := AsError(fmt.Errorf("wrap: %w", InvalidParams("filter.year", "bad")))
	if e.Code != CodeInvalidParams || e.Data == nil || e.Data.Field != "filter.year" {
		t.Fatalf("got %+v", e)
	}
	plain := AsError(errors.New("secret-host:9200 refused"))
	if plain.Code != CodeInternalError || plain.Message != "internal error" {
		t.Fatalf("cause text leaked or wrong code: %+v", plain)
	}
}

func TestCodeTable(t *testing.T) {
	for _, tc := range []struct {
		code      Code
		retryable bool
	}{
		{CodeRateLimited, true}, {CodeBackendUnavailable, true}, {CodeTimeout, true},
		{CodeInvalidParams, false}, {CodeCapabilityMissing, false}, {CodeUnknownMethod, false},
		{CodeOptionUnsupported, false}, {CodeVersionMismatch, false}, {CodePayloadTooLarge, false},
	} {
		if !tc.code.Valid() || tc.code.Retryable() != tc.retryable {
			t.Errorf("%s: valid=%t retryable=%t", tc.code, tc.code.Valid(), tc.code.Retryable())
		}
	}
	for _, c := range []Code{0, 1, -32000, -32099, -32604, -32017, -32007} {
		if c.Valid() {
			t.Errorf("%d must not be a §12 code", c)
		}
	}
}

func TestErrorRetryAdvice(t *testing.T) {
	var none *Error
	for _, tc := range []struct {
		name  string
		e     *Error
		retry bool
		after time.Duration
	}{
		{"nil", none, false, 0},
		{"no data", NewError(CodeInternalError, "x"), false, 0},
		{"retryable with hint", Retryable(CodeRateLimited, 1500, "slow down"), true, 1500 * time.Millisecond},
		{"retryable without hint", Retryable(CodeBackendUnavailable, 0, "down"), true, 0},
		{"invalid params", InvalidParams("k", "bad"), false, 0},
	} {
		if got := tc.e.AdvisesRetry(); got != tc.retry {
			t.Errorf("%s: AdvisesRetry = %v, want %v", tc.name, got, tc.retry)
		}
		if got := tc.e.RetryAfter(); got != tc.after {
			t.Errorf("%s: RetryAfter = %v, want %v", tc.name, got, tc.after)
		}
	}
}
