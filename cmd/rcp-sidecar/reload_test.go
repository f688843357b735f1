package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

const (
	reloadOldKey = "old-key-00000000000000"
	reloadNewKey = "new-key-00000000000000"
)

// waitLog waits until logs holds want n times.
func waitLog(t *testing.T, logs *lockedBuffer, want string, n int) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(20 * time.Millisecond) {
		if strings.Count(logs.String(), want) >= n {
			return
		}
	}
	t.Fatalf("no %q (x%d) in the log:\n%s", want, n, logs)
}

// keepAlive is a client on one connection, which reports whether each
// request reused it.
type keepAlive struct {
	c      *http.Client
	reused bool
}

func newKeepAlive() *keepAlive {
	return &keepAlive{c: &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}}
}

func (k *keepAlive) post(t *testing.T, url, bearer, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+bearer)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { k.reused = i.Reused },
	}))
	resp, err := k.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestSIGHUPReloadsAccess runs serve with a real listener: a request
// whose headers were admitted before a SIGHUP finishes after it; the new
// file's keys and JWT settings apply to the next request on the same
// keep-alive connection; a bad file is refused and logged, and the
// running policy stays.
func TestSIGHUPReloadsAccess(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	backend := memoryBackend(t, "")
	writeFile(t, cfg, backend+"access:\n  keys:\n    - {id: old, hash: \""+keyHash(reloadOldKey)+"\"}\n")
	cmd, base, logs, _ := serveProcess(t, cfg)
	ka := newKeepAlive()
	const info = `{"jsonrpc":"2.0","id":1,"method":"info"}`
	if st := ka.post(t, base+"/info", reloadOldKey, info); st != http.StatusOK {
		t.Fatalf("old key before reload: HTTP %d", st)
	}

	// In flight: headers (and the old key) sent, body not yet.
	inflight, err := net.Dial("tcp", hostAddr(base))
	if err != nil {
		t.Fatal(err)
	}
	defer inflight.Close()
	body := `{"jsonrpc":"2.0","id":7,"method":"retrieve","params":{"query":"comets","k":1,"mode":"sparse"}}`
	if _, err := io.WriteString(inflight, rawRequest("/rcp/retrieve", reloadOldKey, body[:20], len(body))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)

	// The new file: the old key is gone, a new key and JWT come in.
	sk, jwks := testIssuer(t)
	writeFile(t, cfg, backend+"access:\n  keys:\n    - {id: new, hash: \""+keyHash(reloadNewKey)+"\"}\n"+
		"  jwt:\n    issuer: https://idp.test/\n    audience: [rcp]\n    jwks_url: "+jwks+"\n    algorithms: [ES256]\n")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, "reload: access policy replaced", 1)

	if _, err := io.WriteString(inflight, body[20:]); err != nil {
		t.Fatal(err)
	}
	_ = inflight.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(inflight), nil)
	if err != nil {
		t.Fatalf("the in-flight request was dropped: %v", err)
	}
	var r struct {
		Result struct{ Hits []struct{ ID string } }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); resp.StatusCode != http.StatusOK || err != nil || len(r.Result.Hits) != 1 || r.Result.Hits[0].ID != "d0" {
		t.Fatalf("in-flight retrieve: HTTP %d, %+v, %v", resp.StatusCode, r, err)
	}

	token := sk.token(t, "https://idp.test/", "rcp")
	steps := []struct {
		bearer string
		want   int
	}{{reloadOldKey, http.StatusUnauthorized}, {reloadNewKey, http.StatusOK}, {token, http.StatusOK}}
	for _, s := range steps {
		if st := ka.post(t, base+"/info", s.bearer, info); st != s.want || !ka.reused {
			t.Fatalf("after reload: HTTP %d (want %d), connection reused %v", st, s.want, ka.reused)
		}
	}

	bad := map[string]string{
		"yaml":        backend + "access:\n  keys: [\n",
		"alg none":    backend + "access:\n  jwt:\n    issuer: https://idp.test/\n    audience: [rcp]\n    jwks_url: " + jwks + "\n    algorithms: [none]\n",
		"unknown key": backend + "access:\n  kees: []\n",
		"bad filter":  backend + "access:\n  keys:\n    - {id: f, hash: \"" + keyHash(reloadOldKey) + "\", filter: {field: nope, op: eq, value: x}}\n",
	}
	n := 0
	for name, file := range bad {
		writeFile(t, cfg, file)
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		n++
		waitLog(t, logs, "reload refused; the running configuration stays", n)
		for _, s := range steps {
			if st := ka.post(t, base+"/info", s.bearer, info); st != s.want {
				t.Fatalf("%s: after a refused reload HTTP %d for a credential that got %d", name, st, s.want)
			}
		}
	}
	if !ka.reused {
		t.Fatal("the keep-alive connection was not kept across reloads")
	}
}

// issuerKey is an ES256 key generated for the test.
type issuerKey struct{ priv *ecdsa.PrivateKey }

// testIssuer serves the JWKS of a key generated for the test (a local
// test server) and returns the key and the JWKS URL.
func testIssuer(t *testing.T) (issuerKey, string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(set) }))
	t.Cleanup(srv.Close)
	return issuerKey{k}, srv.URL + "/jwks"
}

func (k issuerKey) token(t *testing.T, iss, aud string) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.priv}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	payload, _ := json.Marshal(map[string]any{"iss": iss, "aud": aud, "sub": "svc", "iat": now, "exp": now + 300})
	obj, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := obj.CompactSerialize()
	return tok
}
