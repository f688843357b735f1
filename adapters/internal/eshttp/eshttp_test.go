package eshttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestTransport(t *testing.T) {
	tr := Transport(3*time.Second, true, nil).Base()
	if tr == http.DefaultTransport {
		t.Fatal("Transport returned the shared default transport")
	}
	if tr.MaxIdleConnsPerHost != 64 || !tr.DisableCompression || tr.ResponseHeaderTimeout != 3*time.Second || tr.DialContext == nil {
		t.Fatalf("transport settings: %+v", tr)
	}
	if Transport(time.Second, false, nil).Base().DisableCompression {
		t.Fatal("compression disabled")
	}
	if MinTLS().MinVersion != tls.VersionTLS12 || tr.TLSClientConfig.MinVersion != tls.VersionTLS12 {
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
	tc := MinTLS()
	tc.RootCAs = pool
	res, err := (&http.Client{Transport: Transport(5*time.Second, false, tc)}).Get(srv.URL)
	if err != nil {
		t.Fatalf("TLS with the pool: %v", err)
	}
	res.Body.Close()
	if _, err := (&http.Client{Transport: Transport(5*time.Second, false, nil)}).Get(srv.URL); err == nil {
		t.Fatal("a server no pool trusts was accepted")
	}
}

// TestPinFingerprint: a server is accepted by the SHA-256 of a
// certificate it presents, in any spelling of the hex, and refused under
// any other pin; a pin that is not 32 bytes of hex is an error.
func TestPinFingerprint(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	sum := sha256.Sum256(srv.Certificate().Raw)
	hexSum := hex.EncodeToString(sum[:])
	var pairs []string
	for i := 0; i < len(hexSum); i += 2 {
		pairs = append(pairs, hexSum[i:i+2])
	}
	wrong := sha256.Sum256([]byte("another certificate"))
	for _, tc := range []struct {
		pin string
		ok  bool
	}{
		{hexSum, true},
		{strings.ToUpper(hexSum), true},
		{strings.Join(pairs, ":"), true},
		{hex.EncodeToString(wrong[:]), false},
	} {
		cfg := MinTLS()
		if err := PinFingerprint(cfg, tc.pin); err != nil {
			t.Fatalf("pin %s: %v", tc.pin, err)
		}
		res, err := (&http.Client{Transport: Transport(5*time.Second, true, cfg)}).Get(srv.URL)
		if err == nil {
			res.Body.Close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("pin %s: err %v, want accepted %v", tc.pin, err, tc.ok)
		}
	}
	for _, bad := range []string{"", "ab", hexSum[:62], hexSum + "00", "zz" + hexSum[2:]} {
		if err := PinFingerprint(MinTLS(), bad); err == nil {
			t.Errorf("pin %q accepted", bad)
		}
	}
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

// countingConn counts the writes a connection makes.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestRequestOneWrite: a request whose head and body fit in
// WriteBufferSize leaves in one write, a dense query's size among them
// (a 384-d vector as text, about 4.5 kB, which the default 4 KiB buffer
// splits in two); a body larger than the buffer takes more than one.
func TestRequestOneWrite(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	tr := Transport(3*time.Second, true, nil)
	defer tr.CloseIdleConnections()
	var writes atomic.Int64
	dial := tr.Base().DialContext
	tr.Base().DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: &writes}, nil
	}
	c := &http.Client{Transport: tr}
	for _, tc := range []struct {
		size int
		want func(int64) bool
	}{
		{4600, func(n int64) bool { return n == 1 }},
		{WriteBufferSize - 1024, func(n int64) bool { return n == 1 }},
		{3 * WriteBufferSize, func(n int64) bool { return n > 1 }},
	} {
		body := bytes.Repeat([]byte("0.012345678,"), tc.size/12)
		req, err := NewRequest(context.Background(), "test", http.MethodPost, srv.URL+"/i/_search", body, false)
		if err != nil {
			t.Fatal(err)
		}
		writes.Store(0)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := writes.Load(); !tc.want(n) {
			t.Errorf("a %d-byte body left in %d writes", len(body), n)
		}
	}
}

// TestTLSConfig: ca_file is trusted when set and takes precedence over a
// fingerprint; a fingerprint alone pins; neither leaves the system's
// roots; errors name the engine; every result keeps the TLS floor.
func TestTLSConfig(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	pemFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(pemFile, certPEM(srv.Certificate().Raw), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(srv.Certificate().Raw)
	pin := hex.EncodeToString(sum[:])
	wrongPin := strings.Repeat("ab", sha256.Size)
	get := func(tc *tls.Config) error {
		res, err := (&http.Client{Transport: Transport(5*time.Second, false, tc)}).Get(srv.URL)
		if err == nil {
			res.Body.Close()
		}
		return err
	}
	cases := []struct {
		name, ca, pin string
		accepts       bool
	}{
		{"ca file", pemFile, "", true},
		{"ca file over a wrong pin", pemFile, wrongPin, true},
		{"pin", "", pin, true},
		{"wrong pin", "", wrongPin, false},
		{"system roots", "", "", false},
	}
	for _, c := range cases {
		tc, err := TLSConfig("engine", c.ca, c.pin)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if tc.MinVersion != tls.VersionTLS12 {
			t.Errorf("%s: TLS floor %x", c.name, tc.MinVersion)
		}
		if err := get(tc); (err == nil) != c.accepts {
			t.Errorf("%s: GET error %v, want accepted=%v", c.name, err, c.accepts)
		}
	}
	if _, err := TLSConfig("engine", "", "xyz"); err == nil || !strings.HasPrefix(err.Error(), "engine: ca_fingerprint") {
		t.Errorf("bad pin: %v", err)
	}
	if _, err := TLSConfig("engine", filepath.Join(t.TempDir(), "none.pem"), ""); err == nil || !strings.HasPrefix(err.Error(), "engine: read ca_file") {
		t.Errorf("missing ca_file: %v", err)
	}
}
