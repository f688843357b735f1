package eshttp

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTransport(t *testing.T) {
	tr := Transport(3*time.Second, true)
	if tr == http.DefaultTransport {
		t.Fatal("Transport returned the shared default transport")
	}
	if tr.MaxIdleConnsPerHost != 64 || !tr.DisableCompression || tr.ResponseHeaderTimeout != 3*time.Second || tr.DialContext == nil {
		t.Fatalf("transport settings: %+v", tr)
	}
	if Transport(time.Second, false).DisableCompression {
		t.Fatal("compression disabled")
	}
	if MinTLS().MinVersion != tls.VersionTLS12 {
		t.Fatal("TLS floor is not 1.2")
	}
}

func TestCA(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadCA("engine", filepath.Join(dir, "missing.pem")); err == nil || !strings.HasPrefix(err.Error(), "engine: read ca_file") {
		t.Fatalf("missing file: %v", err)
	}
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := CAPool("engine", junk); err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Fatalf("junk file: %v", err)
	}
	// A test server's certificate is a valid PEM CA.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	pemFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(pemFile, certPEM(srv.Certificate().Raw), 0o600); err != nil {
		t.Fatal(err)
	}
	pool, err := CAPool("engine", pemFile)
	if err != nil || pool == nil {
		t.Fatalf("CAPool: %v", err)
	}
	tr := Transport(5*time.Second, false)
	tr.TLSClientConfig = MinTLS()
	tr.TLSClientConfig.RootCAs = pool
	res, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatalf("TLS with the pool: %v", err)
	}
	res.Body.Close()
}

func certPEM(der []byte) []byte {
	const line = 64
	var b strings.Builder
	b.WriteString("-----BEGIN CERTIFICATE-----\n")
	enc := base64Std(der)
	for len(enc) > line {
		b.WriteString(enc[:line] + "\n")
		enc = enc[line:]
	}
	b.WriteString(enc + "\n-----END CERTIFICATE-----\n")
	return []byte(b.String())
}

func TestNewRequest(t *testing.T) {
	req, err := NewRequest(context.Background(), "engine", http.MethodPost, "/x/_bulk", []byte("{}\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("ndjson content type %q", ct)
	}
	if b, _ := io.ReadAll(req.Body); string(b) != "{}\n" {
		t.Fatalf("body %q", b)
	}
	req, err = NewRequest(context.Background(), "engine", http.MethodGet, "/x/_mapping", nil, false)
	if err != nil || req.Body != nil || req.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("json request without body: %v %v %q", err, req.Body, req.Header.Get("Content-Type"))
	}
	if _, err := NewRequest(context.Background(), "engine", "BAD METHOD", "/", nil, false); err == nil || !strings.HasPrefix(err.Error(), "engine: build") {
		t.Fatalf("bad method: %v", err)
	}
}

// closer records whether the body was closed.
type closer struct {
	io.Reader
	closed bool
}

func (c *closer) Close() error { c.closed = true; return nil }

func reply(status int, body string) (*http.Response, *closer) {
	c := &closer{Reader: strings.NewReader(body)}
	return &http.Response{StatusCode: status, Header: http.Header{"X": {"y"}}, Body: c, ContentLength: int64(len(body))}, c
}

func TestRead(t *testing.T) {
	res, c := reply(200, `{"ok":true}`)
	out, err := Read(res)
	if err != nil || out.Status != 200 || string(out.Body) != `{"ok":true}` || out.Header.Get("X") != "y" || !c.closed {
		t.Fatalf("plain read: %+v %v closed=%v", out, err, c.closed)
	}

	// A non-2xx body is read as well, so the caller can decode the error
	// document.
	res, _ = reply(429, `{"error":{"type":"x"}}`)
	out, err = Read(res)
	if err != nil || out.Status != 429 || string(out.Body) != `{"error":{"type":"x"}}` {
		t.Fatalf("error read: %+v %v", out, err)
	}
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
