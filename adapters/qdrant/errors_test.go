package qdrant

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func TestErrorCode(t *testing.T) {
	a := &adapter{}
	wrapped := func(c codes.Code) error {
		return opErr("query", fmt.Errorf("Query() failed: %w", status.Error(c, "server detail")))
	}
	cases := []struct {
		name string
		err  error
		want rcp.Code
	}{
		{"unavailable", wrapped(codes.Unavailable), rcp.CodeBackendUnavailable},
		{"deadline", wrapped(codes.DeadlineExceeded), rcp.CodeTimeout},
		{"exhausted", wrapped(codes.ResourceExhausted), rcp.CodeRateLimited},
		{"exhausted_retry_after", opErr("query", &qdrantgo.QdrantResourceExhaustedError{RetryAfterS: 2}), rcp.CodeRateLimited},
		{"unauthenticated", wrapped(codes.Unauthenticated), rcp.CodeUnauthorized},
		{"permission", wrapped(codes.PermissionDenied), rcp.CodeUnauthorized},
		{"invalid", wrapped(codes.InvalidArgument), rcp.CodeInvalidParams},
		{"not_found", wrapped(codes.NotFound), rcp.CodeBackendUnavailable},
		{"canceled", wrapped(codes.Canceled), rcp.CodeCancelled},
		{"internal", wrapped(codes.Internal), rcp.CodeInternalError},
		{"ctx_canceled", context.Canceled, rcp.CodeCancelled},
		{"closed", errClosed, rcp.CodeBackendUnavailable},
		{"rcp_error", rcp.OptionUnsupported("contains", "x"), rcp.CodeOptionUnsupported},
		{"plain", errors.New("boom"), rcp.CodeInternalError},
		{"nil", nil, rcp.CodeInternalError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := a.ErrorCode(c.err); got != c.want {
				t.Errorf("ErrorCode = %d, want %d", got, c.want)
			}
		})
	}
	var ce *callError
	if err := opErr("q", &qdrantgo.QdrantResourceExhaustedError{RetryAfterS: 2}); !errors.As(err, &ce) || ce.RetryAfterMs() != 2000 {
		t.Errorf("RetryAfterMs = %v, want 2000", ce)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := func(c *Config) {}
	cases := []struct {
		name  string
		edit  func(*Config)
		valid bool
	}{
		{"minimal", ok, true},
		{"no_address", func(c *Config) { c.Address = "" }, false},
		{"bad_port", func(c *Config) { c.Address = "h:99999" }, false},
		{"no_collection", func(c *Config) { c.Collection = "" }, false},
		{"sparse_pair", func(c *Config) { c.SparseVector, c.SparseModel = "s", ModelBM25 }, true},
		{"sparse_without_model", func(c *Config) { c.SparseVector = "s" }, false},
		{"unknown_model", func(c *Config) { c.SparseVector, c.SparseModel = "s", "splade" }, false},
		{"ca_without_tls", func(c *Config) { c.CAFile = "ca.pem" }, false},
		{"tls", func(c *Config) { c.TLS, c.ServerName = true, "q.example" }, true},
		{"negative_timeout", func(c *Config) { c.Timeout = -1 }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Address, cfg.Collection = "localhost:6334", "docs"
			c.edit(cfg)
			if err := cfg.Validate(); (err == nil) != c.valid {
				t.Errorf("Validate() = %v, want valid=%t", err, c.valid)
			}
		})
	}
}

func TestPointID(t *testing.T) {
	uuidV5 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]string{}
	for _, id := range []string{"42", "d01", "", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "ünïcode"} {
		p := PointID(id)
		if !uuidV5.MatchString(p) {
			t.Errorf("PointID(%q) = %q is not a UUIDv5", id, p)
		}
		if PointID(id) != p {
			t.Errorf("PointID(%q) is not deterministic", id)
		}
		if prev, dup := seen[p]; dup {
			t.Errorf("PointID(%q) collides with %q", id, prev)
		}
		seen[p] = id
	}
}

func TestVersion(t *testing.T) {
	cases := []struct {
		in   string
		want version
		ok   bool
	}{{"1.16.2", version{1, 16, 2}, true}, {"v1.15", version{1, 15, 0}, true}, {"1.17.0-dev", version{1, 17, 0}, true}, {"x", version{}, false}}
	for _, c := range cases {
		got, err := parseVersion(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseVersion(%q) = %v, %v", c.in, got, err)
		}
	}
	if !(version{1, 15, 2}).atLeast(minBM25) || (version{1, 15, 1}).atLeast(minBM25) || !(version{1, 16, 0}).atLeast(minBM25) {
		t.Error("atLeast gate for 1.15.2 is wrong")
	}
}
