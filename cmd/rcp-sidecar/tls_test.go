package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a throwaway certificate authority generated at test time.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// newTestCA creates a self-signed ECDSA P-256 CA valid for one hour.
func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	tmpl := certTemplate(name)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	key := newKey(t)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pemBlock("CERTIFICATE", der)}
}

// issue signs a leaf certificate for usage (server or client auth) and
// returns its certificate and key PEM.
func (ca *testCA) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	tmpl := certTemplate(name)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	key := newKey(t)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", kder)
}

func certTemplate(name string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	now := time.Now()
	return &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour)}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// tlsFixture holds the generated PKI: the trusted CA, a client certificate
// it signed and one signed by an unrelated CA.
type tlsFixture struct {
	dir       string
	ca        *testCA
	client    tls.Certificate
	untrusted tls.Certificate
}

func newTLSFixture(t *testing.T) *tlsFixture {
	t.Helper()
	f := &tlsFixture{dir: t.TempDir(), ca: newTestCA(t, "rcp test CA")}
	sc, sk := f.ca.issue(t, "127.0.0.1", x509.ExtKeyUsageServerAuth)
	writeFile(t, filepath.Join(f.dir, "ca.pem"), string(f.ca.pem))
	writeFile(t, filepath.Join(f.dir, "server.pem"), string(sc))
	writeFile(t, filepath.Join(f.dir, "server.key"), string(sk))
	f.client = keyPair(t, f.ca, "trusted client")
	f.untrusted = keyPair(t, newTestCA(t, "other CA"), "untrusted client")
	return f
}

func keyPair(t *testing.T, ca *testCA, name string) tls.Certificate {
	t.Helper()
	c, k := ca.issue(t, name, x509.ExtKeyUsageClientAuth)
	pair, err := tls.X509KeyPair(c, k)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// serve starts `serve` over the memory engine with access.tls set; mTLS
// adds the CA as client_ca_file. It returns the HTTPS base URL.
func (f *tlsFixture) serve(t *testing.T, mtls bool) string {
	t.Helper()
	corpus := filepath.Join(f.dir, "c.jsonl")
	writeFile(t, corpus, `{"_id":"d1","title":"t","text":"rocket report"}`+"\n")
	tlsCfg := "{cert_file: " + filepath.Join(f.dir, "server.pem") + ", key_file: " + filepath.Join(f.dir, "server.key")
	if mtls {
		tlsCfg += ", client_ca_file: " + filepath.Join(f.dir, "ca.pem")
	}
	cfg := filepath.Join(f.dir, "c.yaml")
	writeFile(t, cfg, "backends:\n  - {name: docs, engine: memory, settings: {corpus: "+corpus+"}}\n"+
		"access:\n  tls: "+tlsCfg+"}\n")
	base := startServe(t, "--config", cfg)
	return "https://" + strings.TrimPrefix(base, "http://")
}

// httpsClient returns an HTTPS client trusting the test CA. With a cert it
// always presents it, even when the server asks for another CA's (the
// default selection would silently send none).
func (f *tlsFixture) httpsClient(cert *tls.Certificate) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(f.ca.cert)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
}

const pingFrame = `{"jsonrpc":"2.0","id":7,"method":"ping"}`

// ping posts a JSON-RPC ping and returns the decoded answer, or the
// transport error (a failed handshake yields no response at all).
func ping(c *http.Client, url string) (map[string]json.RawMessage, error) {
	resp, err := c.Post(url, "application/json", strings.NewReader(pingFrame))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var ans map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		return nil, err
	}
	return ans, nil
}

// assertPong fails unless ping got a JSON-RPC result for id 7.
func assertPong(t *testing.T, c *http.Client, url string) {
	t.Helper()
	ans, err := ping(c, url)
	if err != nil {
		t.Fatalf("ping over TLS: %v", err)
	}
	if string(ans["id"]) != "7" || ans["result"] == nil || ans["error"] != nil {
		t.Fatalf("ping over TLS: unexpected answer %v", ans)
	}
}

// assertRefused fails unless ping gets no response at all.
func assertRefused(t *testing.T, c *http.Client, url string) {
	t.Helper()
	ans, err := ping(c, url)
	if err == nil {
		t.Fatalf("request succeeded, want a failed handshake: %v", ans)
	}
	if !strings.Contains(err.Error(), "tls") && !strings.Contains(err.Error(), "x509") {
		t.Fatalf("want a TLS handshake error, got %v", err)
	}
	t.Logf("refused: %v", err)
}

// TestTLSServe: with access.tls set (§15) the listener speaks HTTPS with
// the configured certificate, and plain HTTP gets no JSON-RPC answer.
func TestTLSServe(t *testing.T) {
	f := newTLSFixture(t)
	url := f.serve(t, false)
	assertPong(t, f.httpsClient(nil), url)
	plain := &http.Client{Timeout: 10 * time.Second}
	httpURL := "http://" + strings.TrimPrefix(url, "https://")
	if ans, err := ping(plain, httpURL); err == nil {
		t.Fatalf("plain HTTP got a JSON-RPC answer: %v", ans)
	} else {
		t.Logf("plain HTTP: %v", err)
	}
	// A client that does not trust the CA must reject the server.
	untrusting := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	assertRefused(t, untrusting, url)
}

// TestTLSMutual: with client_ca_file set only clients presenting a
// certificate signed by that CA complete the handshake.
func TestTLSMutual(t *testing.T) {
	f := newTLSFixture(t)
	url := f.serve(t, true)
	assertPong(t, f.httpsClient(&f.client), url)
	tests := []struct {
		name string
		cert *tls.Certificate
	}{
		{"no client certificate", nil},
		{"certificate from an untrusted CA", &f.untrusted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertRefused(t, f.httpsClient(tc.cert), url)
		})
	}
}
