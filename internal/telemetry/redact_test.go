package telemetry

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	r := NewRedactor([]string{"emb-apikey-0123", `pa"ss<word>`, "abc", ""})
	cases := []struct{ in, want string }{
		{"Authorization: Bearer emb-apikey-0123", "Authorization: Bearer [redacted]"},
		{`{"echo":"pa\"ss\u003cword\u003e"}`, `{"echo":"[redacted]"}`},
		{`{"echo":"pa\"ss<word>"}`, `{"echo":"[redacted]"}`},
		{"key=" + base64.StdEncoding.EncodeToString([]byte("emb-apikey-0123")), "key=[redacted]"},
		{"abc is short but still a secret", "[redacted] is short but still a secret"},
		{"nothing secret", "nothing secret"},
	}
	for _, tc := range cases {
		if got := r.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if NewRedactor([]string{"", ""}) != nil {
		t.Error("a Redactor without a secret should be nil")
	}
	var none *Redactor
	if got := none.Redact("emb-apikey-0123"); got != "emb-apikey-0123" {
		t.Errorf("nil Redactor changed %q", got)
	}
}

// TestRedactShortSecrets: a secret of one to three characters is
// scrubbed like any other, as written and in every encoding.
func TestRedactShortSecrets(t *testing.T) {
	tests := []struct{ secret, in, want string }{
		{"x", "a x b", "a [redacted] b"},
		{"pw", "pwned pw", "[redacted]ned [redacted]"},
		{"k&y", `{"k":"k\u0026y"}`, `{"k":"[redacted]"}`},
		{"k&y", "q=k%26y", "q=[redacted]"},
		{"abc", "basic " + base64.StdEncoding.EncodeToString([]byte("abc")), "basic [redacted]"},
	}
	for _, tc := range tests {
		r := NewRedactor([]string{tc.secret})
		if r == nil {
			t.Fatalf("NewRedactor(%q) = nil", tc.secret)
		}
		if got := r.Redact(tc.in); got != tc.want {
			t.Errorf("secret %q: Redact(%q) = %q, want %q", tc.secret, tc.in, got, tc.want)
		}
	}
}

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

// TestRedactHandler: no attribute shape lets a secret through to a text
// or JSON log line, and attributes without secrets keep their kind.
func TestRedactHandler(t *testing.T) {
	const secret = "emb-apikey-0123"
	for _, format := range []string{FormatText, FormatJSON} {
		var buf bytes.Buffer
		l, err := NewLogger(&buf, "debug", format)
		if err != nil {
			t.Fatal(err)
		}
		l = slog.New(NewRedactor([]string{secret}).Handler(l.Handler()))
		l = l.With("with", "key "+secret).WithGroup("g")
		l.Error("upstream said Bearer "+secret,
			"err", fmt.Errorf("wrapped: %w", errors.New("body: "+secret)),
			"stringer", stringer{secret},
			"map", map[string]any{"auth": secret},
			slog.Group("nested", "v", secret),
			"count", 3)
		out := buf.String()
		if strings.Contains(out, secret) {
			t.Errorf("%s: a secret reached the log: %s", format, out)
		}
		if strings.Count(out, Redacted) != 6 {
			t.Errorf("%s: want 6 redactions in %s", format, out)
		}
		if !strings.Contains(out, "count=3") && !strings.Contains(out, `"count":3`) {
			t.Errorf("%s: an ordinary attribute changed: %s", format, out)
		}
	}
}
