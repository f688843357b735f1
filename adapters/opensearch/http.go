package opensearch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"

	osgo "github.com/opensearch-project/opensearch-go/v4"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
)

// maxBody bounds how much of a response is read.
const maxBody = 256 << 20

// client wraps the vendor client: one pooled transport, outbound auth,
// retries disabled (the Engine and its caller own retries, §12.2).
type client struct {
	os *osgo.Client
	t  *http.Transport
}

// response is a completed HTTP exchange.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func newClient(cfg *Config) (*client, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	t.DisableCompression = cfg.DisableCompression
	t.ResponseHeaderTimeout = cfg.Timeout
	t.DialContext = (&net.Dialer{Timeout: cfg.Timeout}).DialContext
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("opensearch: read ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("opensearch: ca_file %q holds no PEM certificate", cfg.CAFile)
		}
		t.TLSClientConfig.RootCAs = pool
	}
	oc, err := osgo.NewClient(vendorConfig(cfg, t))
	if err != nil {
		return nil, fmt.Errorf("opensearch: client: %w", err)
	}
	return &client{os: oc, t: t}, nil
}

// vendorConfig maps Config to the vendor client's settings.
func vendorConfig(cfg *Config, t *http.Transport) osgo.Config {
	off := false
	vc := osgo.Config{
		Addresses:             cfg.URLs,
		Username:              cfg.Username,
		Password:              string(cfg.Password),
		Transport:             t,
		DisableRetry:          true,
		DiscoverNodesOnStart:  &off,
		HealthCheckMaxRetries: -1,
		Header:                http.Header{},
	}
	if cfg.Bearer != "" {
		vc.Header.Set("Authorization", "Bearer "+string(cfg.Bearer))
	}
	return vc
}

func (c *client) close() error {
	c.t.CloseIdleConnections()
	return c.os.Close()
}

// do sends one request. Non-2xx statuses become *Error carrying the decoded
// error body; transport failures are returned as they are (ErrorCode
// classifies both).
func (c *client) do(ctx context.Context, method, path string, body []byte, ndjson bool) (*response, error) {
	return c.doWith(ctx, method, path, body, ndjson, nil)
}

// doWith is do, except that a 2xx body is handed to use in a pooled buffer
// (which use must not keep) instead of being copied into the response.
func (c *client) doWith(ctx context.Context, method, path string, body []byte, ndjson bool, use func([]byte) error) (*response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return nil, fmt.Errorf("opensearch: build %s %s: %w", method, path, err)
	}
	req.Header = http.Header{}
	req.Header.Set("Content-Type", "application/json")
	if ndjson {
		req.Header.Set("Content-Type", "application/x-ndjson")
	}
	res, err := c.os.Stream(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if use != nil && res.StatusCode/100 == 2 {
		return &response{Status: res.StatusCode, Header: res.Header}, dsl.WithBody(res.Body, maxBody, use)
	}
	data, err := dsl.ReadBody(res.Body, res.ContentLength, maxBody)
	if err != nil {
		return nil, err
	}
	out := &response{Status: res.StatusCode, Header: res.Header, Body: data}
	if res.StatusCode/100 != 2 {
		return out, newError(method, path, out)
	}
	return out, nil
}

// getJSON GETs path and decodes a 2xx body into v.
func (c *client) getJSON(ctx context.Context, path string, v any) error {
	res, err := c.do(ctx, http.MethodGet, path, nil, false)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res.Body, v); err != nil {
		return fmt.Errorf("opensearch: decode %s: %w", path, err)
	}
	return nil
}
