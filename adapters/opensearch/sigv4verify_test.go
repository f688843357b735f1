package opensearch

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sigv4Verifier checks AWS Signature Version 4 (header form,
// AWS4-HMAC-SHA256) the way a receiving service does. It is written from
// the published algorithm (canonical request, string to sign, derived
// signing key), independently of the AWS SDK, so that the SDK's signer
// can be tested against it; it is itself tested against AWS's published
// test vectors (TestSigV4VerifierAcceptsAWSVectors).
type sigv4Verifier struct {
	akid, secret, token string
	region, service     string
	// now, when set, bounds X-Amz-Date to ±5 minutes of it.
	now func() time.Time
}

// sigv4Auth is a parsed Authorization header.
type sigv4Auth struct {
	akid, date, region, service string
	signed                      []string
	signature                   string
}

func parseSigV4Auth(h string) (sigv4Auth, error) {
	var a sigv4Auth
	rest, ok := strings.CutPrefix(h, "AWS4-HMAC-SHA256 ")
	if !ok {
		return a, errors.New("not AWS4-HMAC-SHA256")
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return a, fmt.Errorf("malformed part %q", part)
		}
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return a, fmt.Errorf("malformed credential scope %q", fields["Credential"])
	}
	a.akid, a.date, a.region, a.service = scope[0], scope[1], scope[2], scope[3]
	a.signed = strings.Split(fields["SignedHeaders"], ";")
	a.signature = fields["Signature"]
	if len(a.signed) == 0 || a.signature == "" {
		return a, errors.New("no signed headers or signature")
	}
	return a, nil
}

// verify checks r (as a server received it, body already read) against
// its Authorization header.
func (v sigv4Verifier) verify(r *http.Request, body []byte) error {
	a, err := parseSigV4Auth(r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	if err := v.checkScope(r, a); err != nil {
		return err
	}
	payload := sha256.Sum256(body)
	payloadHex := hex.EncodeToString(payload[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != payloadHex {
		return errors.New("x-amz-content-sha256 does not match the body")
	}
	creq := strings.Join([]string{r.Method, canonicalURI(r.URL), canonicalQuery(r.URL.RawQuery),
		canonicalHeaders(r, a.signed), strings.Join(a.signed, ";"), payloadHex}, "\n")
	sum := sha256.Sum256([]byte(creq))
	scope := a.date + "/" + a.region + "/" + a.service + "/aws4_request"
	sts := "AWS4-HMAC-SHA256\n" + r.Header.Get("X-Amz-Date") + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	key := mac([]byte("AWS4"+v.secret), a.date)
	for _, s := range []string{a.region, a.service, "aws4_request"} {
		key = mac(key, s)
	}
	want := hex.EncodeToString(mac(key, sts))
	if !hmac.Equal([]byte(want), []byte(a.signature)) {
		return errors.New("signature does not match")
	}
	return nil
}

// checkScope checks the credential scope, the date and the signed-header
// list before any signature is computed.
func (v sigv4Verifier) checkScope(r *http.Request, a sigv4Auth) error {
	switch {
	case a.akid != v.akid:
		return errors.New("unknown access key id")
	case a.region != v.region || a.service != v.service:
		return fmt.Errorf("scope %s/%s, want %s/%s", a.region, a.service, v.region, v.service)
	case !slices.IsSorted(a.signed) || !slices.Contains(a.signed, "host"):
		return errors.New("signed headers unsorted or without host")
	case !slices.Contains(a.signed, "x-amz-date") && r.Header.Get("Date") == "":
		return errors.New("no signed date")
	}
	amz := r.Header.Get("X-Amz-Date")
	t, err := time.Parse("20060102T150405Z", amz)
	if err != nil || amz[:8] != a.date {
		return fmt.Errorf("x-amz-date %q does not match the scope date %s", amz, a.date)
	}
	if v.now != nil && (v.now().Sub(t) > 5*time.Minute || t.Sub(v.now()) > 5*time.Minute) {
		return errors.New("request time too skewed")
	}
	if v.token != "" && (r.Header.Get("X-Amz-Security-Token") != v.token || !slices.Contains(a.signed, "x-amz-security-token")) {
		return errors.New("session token missing, wrong or unsigned")
	}
	return nil
}

func mac(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// uriEncode is RFC 3986 percent-encoding: everything but the unreserved
// characters, upper-case hex; '/' kept when path is true.
func uriEncode(s string, path bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		case c == '/' && path:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// canonicalURI is the path as sent, URI-encoded once more (services
// other than S3 encode each segment twice).
func canonicalURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return uriEncode(p, true)
}

// canonicalQuery decodes each name=value pair, re-encodes both strictly
// and sorts by name, then value.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	var pairs [][2]string
	for _, kv := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(kv, "=")
		dk, err1 := url.PathUnescape(k)
		dv, err2 := url.PathUnescape(v)
		if err1 != nil || err2 != nil {
			dk, dv = k, v
		}
		pairs = append(pairs, [2]string{uriEncode(dk, false), uriEncode(dv, false)})
	}
	slices.SortFunc(pairs, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p[0] + "=" + p[1]
	}
	return strings.Join(out, "&")
}

// canonicalHeaders lists each signed header as name:values, the values
// trimmed, inner runs of spaces collapsed, joined by commas in the order
// received. Go's server keeps Host and Content-Length apart from Header.
func canonicalHeaders(r *http.Request, signed []string) string {
	var b strings.Builder
	for _, h := range signed {
		var vals []string
		switch h {
		case "host":
			vals = []string{r.Host}
		case "content-length":
			vals = slices.Clone(r.Header.Values(h))
			if len(vals) == 0 {
				vals = []string{strconv.FormatInt(r.ContentLength, 10)}
			}
		default:
			vals = slices.Clone(r.Header.Values(h))
		}
		for i, v := range vals {
			vals[i] = strings.Join(strings.Fields(v), " ")
		}
		b.WriteString(h + ":" + strings.Join(vals, ",") + "\n")
	}
	return b.String()
}
