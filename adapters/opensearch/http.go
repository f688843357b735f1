package opensearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	osgo "github.com/opensearch-project/opensearch-go/v4"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eshttp"
	"github.com/rcp-sidecar/rcp-sidecar/internal/h1"
)

// client wraps the vendor client: one pooled transport, outbound auth,
// retries disabled (the Engine and its caller own retries, §12.2).
type client struct {
	os *osgo.Client
	t  *h1.Transport
}

// response is a completed HTTP exchange.
type response = eshttp.Response

// newClient builds the client; with aws set, every request (probe,
// search, writes) is signed with SigV4 by the transport (sigv4.go).
func newClient(ctx context.Context, cfg *Config) (*client, error) {
	tc, err := eshttp.TLSConfig(Name, cfg.CAFile, "")
	if err != nil {
		return nil, err
	}
	t := eshttp.Transport(cfg.Timeout, cfg.DisableCompression, tc)
	vc := vendorConfig(cfg, t)
	if cfg.AWS != nil {
		if vc.Signer, err = newSigner(ctx, cfg.AWS); err != nil {
			return nil, err
		}
	}
	oc, err := osgo.NewClient(vc)
	if err != nil {
		return nil, fmt.Errorf("opensearch: client: %w", err)
	}
	return &client{os: oc, t: t}, nil
}

// vendorConfig maps Config to the vendor client's settings.
func vendorConfig(cfg *Config, t http.RoundTripper) osgo.Config {
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
	req, err := eshttp.NewRequest(ctx, Name, method, path, body, ndjson)
	if err != nil {
		return nil, err
	}
	res, err := c.os.Stream(req)
	if err != nil {
		return nil, err
	}
	out, err := eshttp.Read(res)
	if err != nil || out.Status/100 == 2 {
		return out, err
	}
	return out, newError(method, path, out)
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
