// Package eshttp is the HTTP plumbing the Elasticsearch and OpenSearch
// adapters share under their vendor clients: the pooled transport and
// its timeouts, compression and TLS floor, CA files and fingerprints,
// and building and reading one JSON or NDJSON exchange. Authentication and the vendor
// client itself stay with each adapter, as do the error types non-2xx
// responses become.
package eshttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/internal/h1"
)

// MaxBody bounds how much of a response is read (a 10 000-hit page with
// vectors stays well below it).
const MaxBody = 256 << 20

// Response is a completed HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// MaxConnsPerHost bounds the connections to one engine node, dialling
// ones included. A request beyond it waits for a free connection until
// its own deadline. Without the bound, a node that stops accepting
// connections (frozen, its listen backlog full) gets a new dial for every
// request, and each dial outlives its cancelled request until the dial
// timeout: thousands of goroutines and their buffers under a fast
// stream of failing requests.
const MaxConnsPerHost = 64

// WriteBufferSize is the write buffer of each pooled connection: a
// request whose head and body fit in it leaves in one system call. The
// transport's default, 4 KiB, splits every dense query in two (384
// floats as decimal text are already 4 KiB; a 4,096-d vector is about
// 48 KiB). At MaxConnsPerHost connections that is 4 MiB a node.
const WriteBufferSize = 64 << 10

// ReadBufferSize is the read buffer of each pooled connection: an
// answer up to its size (a page of ten hits with their text) is read in
// one system call with its head, where the default 4 KiB buffer takes the
// head and the first few kilobytes, then the rest. At MaxConnsPerHost
// connections that is another 4 MiB a node.
const ReadBufferSize = 64 << 10

// Transport is the pooled HTTP transport the vendor clients send
// through, sized for concurrent retrieval: at most MaxConnsPerHost
// connections a node, each with WriteBufferSize and ReadBufferSize
// buffers; timeout bounds dialling and the wait for response headers;
// disableCompression turns off gzip; tlsConf (nil: MinTLS) secures
// https. Each exchange is made
// on the caller's goroutine (internal/h1): net/http's own transport
// hands every exchange between the caller and two goroutines of the
// connection, a large part of the CPU of a query (docs/benchmarks.md).
// Requests through a proxy from the environment go over net/http's.
func Transport(timeout time.Duration, disableCompression bool, tlsConf *tls.Config) *h1.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = MaxConnsPerHost
	t.MaxConnsPerHost = MaxConnsPerHost
	t.WriteBufferSize = WriteBufferSize
	t.ReadBufferSize = ReadBufferSize
	t.DisableCompression = disableCompression
	t.ResponseHeaderTimeout = timeout
	t.DialContext = (&net.Dialer{Timeout: timeout}).DialContext
	if tlsConf == nil {
		tlsConf = MinTLS()
	}
	t.TLSClientConfig = tlsConf
	return h1.New(t)
}

// MinTLS is the TLS floor of outbound connections: TLS 1.2.
func MinTLS() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS12} }

// TLSConfig is an engine client's TLS settings: MinTLS, trusting the
// certificates of caFile when it is set, else accepting the server by
// the certificate fingerprint when that is set (PinFingerprint), else
// the system's roots. engine prefixes errors.
func TLSConfig(engine, caFile, fingerprint string) (*tls.Config, error) {
	tc := MinTLS()
	switch {
	case caFile != "":
		pool, err := CAPool(engine, caFile)
		if err != nil {
			return nil, err
		}
		tc.RootCAs = pool
	case fingerprint != "":
		if err := PinFingerprint(tc, fingerprint); err != nil {
			return nil, fmt.Errorf("%s: %w", engine, err)
		}
	}
	return tc, nil
}

// PinFingerprint makes cfg accept a server by the SHA-256 fingerprint
// of a certificate it presents, leaf or chain (Elasticsearch's
// ca_fingerprint, as its Go client checks it), in place of verifying
// the chain: the fingerprint is what the operator trusts.
func PinFingerprint(cfg *tls.Config, fingerprint string) error {
	want, err := ParseFingerprint(fingerprint)
	if err != nil {
		return err
	}
	cfg.InsecureSkipVerify = true // the pin below replaces the chain check
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		for _, c := range cs.PeerCertificates {
			got := sha256.Sum256(c.Raw)
			if subtle.ConstantTimeCompare(got[:], want) == 1 {
				return nil
			}
		}
		return errors.New("no certificate the server presented has the configured ca_fingerprint")
	}
	return nil
}

// ParseFingerprint reads a SHA-256 fingerprint: 64 hex digits, in either
// case, optionally in colon-separated pairs.
func ParseFingerprint(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.ReplaceAll(s, ":", ""))
	if err != nil || len(b) != sha256.Size {
		return nil, errors.New("ca_fingerprint must be a SHA-256 fingerprint: 64 hex digits")
	}
	return b, nil
}

// ReadCA reads the PEM file configured as ca_file; engine prefixes errors.
func ReadCA(engine, file string) ([]byte, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: read ca_file: %w", engine, err)
	}
	return pem, nil
}

// CAPool is the certificate pool of the PEM file configured as ca_file;
// a file without a PEM certificate is an error.
func CAPool(engine, file string) (*x509.CertPool, error) {
	pem, err := ReadCA(engine, file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: ca_file %q holds no PEM certificate", engine, file)
	}
	return pool, nil
}

// NewRequest builds a request with a JSON body, or an NDJSON one when
// ndjson is set (bulk, multi-search). A nil body sends none.
func NewRequest(ctx context.Context, engine, method, path string, body []byte, ndjson bool) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return nil, fmt.Errorf("%s: build %s %s: %w", engine, method, path, err)
	}
	ct := "application/json"
	if ndjson {
		ct = "application/x-ndjson"
	}
	req.Header.Set("Content-Type", ct)
	return req, nil
}

// Read reads and closes res's body, at most MaxBody bytes, into a buffer
// of its own: a search answer's metadata stays slices of it. Read does
// not judge the status: the caller turns a non-2xx Response into its
// engine's error.
func Read(res *http.Response) (*Response, error) {
	defer res.Body.Close()
	data, err := dsl.ReadBody(res.Body, res.ContentLength, MaxBody)
	if err != nil {
		return nil, err
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: data}, nil
}
