package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// rpcClient speaks RCP over HTTP (§5.2) to a base URL such as
// http://127.0.0.1:8080/rcp. It initializes once and carries a stateful
// server's session token.
type rpcClient struct {
	base    string
	hc      *http.Client
	nextID  atomic.Int64
	session string
}

type rpcResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *rcp.Error      `json:"error"`
}

func newRPCClient(base string, hc *http.Client) *rpcClient {
	return &rpcClient{base: strings.TrimSuffix(base, "/"), hc: hc}
}

// initialize runs the §13 handshake and keeps _meta.session when present.
func (c *rpcClient) initialize(ctx context.Context) error {
	params := map[string]any{"protocolVersion": rcp.ProtocolVersion, "client": map[string]string{"name": "rcp-sidecar", "version": version}}
	raw, err := c.call(ctx, "initialize", params)
	if err != nil {
		return err
	}
	var res struct {
		Meta struct {
			Session string `json:"session"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	c.session = res.Meta.Session
	return nil
}

// call sends one request and returns its result, or the JSON-RPC error
// (as *rcp.Error) or a transport error.
func (c *rpcClient) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID.Add(1), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+method, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.session != "" {
		req.Header.Set("RCP-Session", c.session)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return decodeRPC(resp)
}

func decodeRPC(resp *http.Response) (json.RawMessage, error) {
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(data))
	}
	var r rpcResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return r.Result, nil
}

// handlerTransport is an http.RoundTripper that calls an in-process
// handler, so in-process queries take exactly the HTTP path.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	t.h.ServeHTTP(rec, req)
	return &http.Response{
		StatusCode: rec.status, Header: rec.header, Request: req,
		Body: io.NopCloser(&rec.body), ContentLength: int64(rec.body.Len()),
	}, nil
}

// recorder is a minimal http.ResponseWriter that buffers the response.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	return r.body.Write(p)
}
