package federation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// HTTPBackend is a small RCP/1 client over HTTP (§5.2) that serves as a
// federated engine: a registry entry pointing at another sidecar or any
// RCP server. It learns the server's identity and capabilities once, at
// Connect, and forwards _meta.federation and a _meta.deadlineMs derived
// from the call's context (§16.2). It implements server.Backend.
type HTTPBackend struct {
	url    string
	client *http.Client
	ids    atomic.Int64
	init   *rcp.InitializeResult
}

// NewHTTPBackend returns a client for the RCP endpoint at url (for example
// http://host:8080/rcp). Call Connect before use; client nil means
// http.DefaultClient.
func NewHTTPBackend(url string, client *http.Client) *HTTPBackend {
	if client == nil {
		client = http.DefaultClient
	}
	return &HTTPBackend{url: strings.TrimSuffix(url, "/"), client: client}
}

// URL is the endpoint the backend calls.
func (b *HTTPBackend) URL() string { return b.url }

// Connect sends initialize and records the server's identity and
// capabilities, fixed from then on (§13.2).
func (b *HTTPBackend) Connect(ctx context.Context) error {
	params := map[string]any{"protocolVersion": rcp.ProtocolVersion, "client": rcp.PeerInfo{Name: "rcp-federation"}}
	var res rcp.InitializeResult
	if err := b.call(ctx, rcp.MethodInitialize, params, &res); err != nil {
		return fmt.Errorf("federation: initialize %s: %w", b.url, err)
	}
	b.init = &res
	return nil
}

// Info is the remote server's identity (empty before Connect).
func (b *HTTPBackend) Info() rcp.PeerInfo {
	if b.init == nil {
		return rcp.PeerInfo{}
	}
	return b.init.Server
}

// Capabilities are the remote server's, as of Connect.
func (b *HTTPBackend) Capabilities() rcp.Capabilities {
	if b.init == nil {
		return rcp.Capabilities{}
	}
	return b.init.Capabilities
}

// Conformance is the level the remote reports in initialize _meta, or L0.
func (b *HTTPBackend) Conformance() string {
	if b.init != nil {
		if s, ok := b.init.Meta["conformance"].(string); ok {
			return s
		}
	}
	return "L0"
}

// Retrieve forwards the call; p.Meta gains deadlineMs from ctx.
func (b *HTTPBackend) Retrieve(ctx context.Context, p *rcp.RetrieveParams) (*rcp.RetrieveResult, error) {
	q := *p
	q.Meta = withDeadline(ctx, p.Meta)
	var res rcp.RetrieveResult
	if err := b.call(ctx, rcp.MethodRetrieve, &q, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Embed forwards the call.
func (b *HTTPBackend) Embed(ctx context.Context, p *rcp.EmbedParams) (*rcp.EmbedResult, error) {
	var res rcp.EmbedResult
	return &res, b.call(ctx, rcp.MethodEmbed, p, &res)
}

// IndexAdd forwards the call.
func (b *HTTPBackend) IndexAdd(ctx context.Context, p *rcp.IndexAddParams) (*rcp.IndexAddResult, error) {
	var res rcp.IndexAddResult
	return &res, b.call(ctx, rcp.MethodIndexAdd, p, &res)
}

// IndexDelete forwards the call.
func (b *HTTPBackend) IndexDelete(ctx context.Context, p *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error) {
	var res rcp.IndexDeleteResult
	return &res, b.call(ctx, rcp.MethodIndexDelete, p, &res)
}

// withDeadline copies meta and sets deadlineMs to what ctx has left.
func withDeadline(ctx context.Context, meta map[string]any) map[string]any {
	ms, ok := remainingMs(ctx)
	if !ok {
		return meta
	}
	out := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		out[k] = v
	}
	out[MetaDeadline] = ms
	return out
}

// wireResponse is a JSON-RPC response as read back.
type wireResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *rcp.Error      `json:"error"`
}

// call POSTs one request to the base endpoint and decodes the result into
// out. Transport failures are -32010; a deadline is -32014.
func (b *HTTPBackend) call(ctx context.Context, method string, params, out any) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": b.ids.Add(1), "method": method, "params": params})
	if err != nil {
		return rcp.NewError(rcp.CodeInternalError, "encode %s", method).WithCause(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url, bytes.NewReader(body))
	if err != nil {
		return rcp.NewError(rcp.CodeInternalError, "request %s", method).WithCause(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return transportErr(ctx, err)
	}
	defer resp.Body.Close()
	return decodeResponse(resp, out)
}

func transportErr(ctx context.Context, err error) *rcp.Error {
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), rcp.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return rcp.NewError(rcp.CodeTimeout, "downstream deadline exceeded").WithCause(err)
	}
	return rcp.NewError(rcp.CodeBackendUnavailable, "downstream unreachable").WithCause(err)
}

func decodeResponse(resp *http.Response, out any) error {
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return rcp.NewError(rcp.CodeBackendUnavailable, "downstream read failed").WithCause(err)
	}
	if resp.StatusCode != http.StatusOK {
		return rcp.NewError(rcp.CodeBackendUnavailable, "downstream answered HTTP %d", resp.StatusCode)
	}
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return rcp.NewError(rcp.CodeBackendUnavailable, "downstream answered malformed JSON").WithCause(err)
	}
	if w.Error != nil {
		if !w.Error.Code.Valid() {
			w.Error.Code = rcp.CodeBackendUnavailable
		}
		return w.Error
	}
	if err := json.Unmarshal(w.Result, out); err != nil {
		return rcp.NewError(rcp.CodeBackendUnavailable, "downstream result malformed").WithCause(err)
	}
	return nil
}
