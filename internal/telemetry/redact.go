package telemetry

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces a secret wherever a Redactor finds it.
const Redacted = "[redacted]"

// Redactor scrubs a fixed set of secrets from text: each one as written,
// JSON-escaped (as an upstream's JSON error body quotes it), URL-escaped
// and base64-encoded. A nil *Redactor scrubs nothing. It is safe for
// concurrent use.
type Redactor struct {
	needles []string
	r       *strings.Replacer
}

// NewRedactor returns a Redactor for secrets; nil when all are empty.
// Every non-empty secret is scrubbed, however short: a short one mangles
// log lines that happen to contain its letters, which is the price of
// never printing it (configuration checks may warn about weak secrets,
// redaction does not second-guess them).
func NewRedactor(secrets []string) *Redactor {
	seen := map[string]bool{}
	var needles []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			needles = append(needles, s)
		}
	}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		add(s)
		for _, html := range []bool{true, false} {
			add(jsonEscaped(s, html))
		}
		add(url.QueryEscape(s))
		add(base64.StdEncoding.EncodeToString([]byte(s)))
	}
	if len(needles) == 0 {
		return nil
	}
	// Longer needles first: at one position the Replacer takes the first
	// that matches, and a secret may contain a shorter one.
	slices.SortFunc(needles, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(needles))
	for _, n := range needles {
		pairs = append(pairs, n, Redacted)
	}
	return &Redactor{needles: needles, r: strings.NewReplacer(pairs...)}
}

// jsonEscaped is s as the inside of a JSON string, with or without HTML
// escaping (<, >, & as \u003c…).
func jsonEscaped(s string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if enc.Encode(s) != nil {
		return s
	}
	q := strings.TrimSuffix(b.String(), "\n")
	return q[1 : len(q)-1]
}

// Redact returns s with every secret replaced by Redacted.
func (r *Redactor) Redact(s string) string {
	if r == nil || !r.contains(s) {
		return s
	}
	return r.r.Replace(s)
}

func (r *Redactor) contains(s string) bool {
	for _, n := range r.needles {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// Handler wraps h so that every record's message and attributes (nested
// groups, errors, Stringers and other values by their printed form
// included) are scrubbed before h formats them. A nil Redactor returns h.
func (r *Redactor) Handler(h slog.Handler) slog.Handler {
	if r == nil {
		return h
	}
	return redactHandler{next: h, r: r}
}

type redactHandler struct {
	next slog.Handler
	r    *Redactor
}

func (h redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.r.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.r.attr(a)
	}
	return redactHandler{next: h.next.WithAttrs(out), r: h.r}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{next: h.next.WithGroup(name), r: h.r}
}

// attr scrubs one attribute. A value of any other kind than string and
// group is checked in its printed form and replaced by the scrubbed text
// only when that holds a secret, so ordinary values keep their type.
func (r *Redactor) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.Redact(v.String()))
	case slog.KindGroup:
		as := v.Group()
		out := make([]slog.Attr, len(as))
		for i, g := range as {
			out[i] = r.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			s = fmt.Sprintf("%+v", x)
		}
		if r.contains(s) {
			return slog.String(a.Key, r.r.Replace(s))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
