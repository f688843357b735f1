package rcptest

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// Client drives a real server.Server over an in-memory NDJSON pipe pair,
// exactly as a stdio client would. Every frame it reads is validated
// against rcp-1.0.json (t.Errorf on violation), and every result against
// the ResultFor binding of its method.
type Client struct {
	t       testing.TB
	w       *io.PipeWriter
	r       *io.PipeReader
	served  chan error
	readEnd chan struct{}

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan *jsonrpc.Response
	notes   []jsonrpc.Request
	closed  bool
}

// NewClient starts server.New(b, server.Options{}) over a pipe and returns
// its client; it is closed automatically at test cleanup.
func NewClient(t testing.TB, b server.Backend) *Client {
	return NewClientOptions(t, b, server.Options{})
}

// NewClientOptions is NewClient with explicit server options.
func NewClientOptions(t testing.TB, b server.Backend, opts server.Options) *Client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &Client{t: t, w: inW, r: outR, served: make(chan error, 1), readEnd: make(chan struct{}),
		pending: map[string]chan *jsonrpc.Response{}}
	srv := server.New(b, opts)
	go func() {
		err := srv.ServeStdio(context.Background(), inR, outW)
		_ = outW.Close()
		_ = inR.Close()
		c.served <- err
	}()
	go c.readLoop()
	t.Cleanup(c.Close)
	return c
}

// Initialize sends initialize (protocolVersion 1, advertising log) and
// decodes the result.
func (c *Client) Initialize(ctx context.Context) (*rcp.InitializeResult, error) {
	raw, rerr := c.Call(ctx, rcp.MethodInitialize, map[string]any{
		"protocolVersion": rcp.ProtocolVersion,
		"client":          rcp.PeerInfo{Name: "rcptest"},
		"capabilities":    map[string]any{"log": map[string]any{}},
	})
	if rerr != nil {
		return nil, rerr
	}
	var res rcp.InitializeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Call sends one request and waits for its response. Transport failures
// and ctx expiry are reported as -32010 / -32006 / -32014 errors.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, *rcp.Error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, rcp.InvalidParams("params", "cannot encode params").WithCause(err)
	}
	c.mu.Lock()
	c.nextID++
	id := jsonrpc.IntID(c.nextID)
	ch := make(chan *jsonrpc.Response, 1)
	c.pending[id.Key()] = ch
	c.mu.Unlock()
	defer c.forget(id)
	frame, err := jsonrpc.EncodeRequest(&jsonrpc.Request{ID: id, Method: method, Params: raw})
	if err == nil {
		err = c.Send(frame)
	}
	if err != nil {
		return nil, rcp.ErrBackendUnavailable.WithCause(err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, rcp.ErrBackendUnavailable.WithCause(errors.New("connection closed"))
		}
		return c.result(method, resp)
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, rcp.ErrTimeout
		}
		return nil, rcp.ErrCancelled
	}
}

func (c *Client) result(method string, resp *jsonrpc.Response) (json.RawMessage, *rcp.Error) {
	if resp.Error != nil {
		e := &rcp.Error{Code: rcp.Code(resp.Error.Code), Message: resp.Error.Message}
		if len(resp.Error.Data) > 0 {
			e.Data = &rcp.ErrorData{}
			_ = json.Unmarshal(resp.Error.Data, e.Data)
		}
		return nil, e
	}
	if err := ValidateResult(method, resp.Result); err != nil {
		c.t.Errorf("rcptest: %s result violates rcp-1.0.json: %v\n%s", method, err, resp.Result)
	}
	if err := CheckVectorBlobs(resp.Result); err != nil {
		c.t.Errorf("rcptest: %s result: %v", method, err)
	}
	return resp.Result, nil
}

// CheckVectorBlobs applies the receiver's §7.3.1 rule to a result carrying
// "encoding":"f32-base64": dimension is present and every vector is
// standard padded base64 of exactly dimension×4 bytes. Other results pass.
func CheckVectorBlobs(result json.RawMessage) error {
	var r struct {
		Vectors   []json.RawMessage `json:"vectors"`
		Encoding  string            `json:"encoding"`
		Dimension int               `json:"dimension"`
	}
	if json.Unmarshal(result, &r) != nil || r.Encoding != "f32-base64" {
		return nil
	}
	if r.Dimension <= 0 {
		return errors.New("f32-base64 result without a positive dimension (§7.3.1)")
	}
	for i, raw := range r.Vectors {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("vectors[%d] is not a base64 string", i)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) != 4*r.Dimension {
			return fmt.Errorf("vectors[%d] decodes to %d bytes, want %d (§7.3.1): %v", i, len(b), 4*r.Dimension, err)
		}
	}
	return nil
}

func (c *Client) forget(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.pending, id.Key())
	c.mu.Unlock()
}

// Send writes one raw frame (a newline is appended).
func (c *Client) Send(frame []byte) error {
	_, err := c.w.Write(append(append([]byte(nil), frame...), '\n'))
	return err
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	frame, err := jsonrpc.EncodeRequest(&jsonrpc.Request{Method: method, Params: raw})
	if err != nil {
		return err
	}
	return c.Send(frame)
}

// NextID returns the id the next Call will use, as a JSON number text.
func (c *Client) NextID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strconv.FormatInt(c.nextID+1, 10)
}

// Notifications returns the notifications received so far.
func (c *Client) Notifications() []jsonrpc.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]jsonrpc.Request(nil), c.notes...)
}

// Close ends the session (EOF on the server's input) and waits for the
// server to return.
func (c *Client) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	_ = c.w.Close()
	if err := <-c.served; err != nil {
		c.t.Errorf("rcptest: ServeStdio returned %v", err)
	}
	<-c.readEnd
}

func (c *Client) readLoop() {
	defer close(c.readEnd)
	defer c.failPending()
	sc := bufio.NewScanner(c.r)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if err := ValidateFrame(line); err != nil {
			c.t.Errorf("rcptest: server frame violates rcp-1.0.json: %v\n%s", err, line)
		}
		c.route(line)
	}
}

func (c *Client) route(line []byte) {
	fr, derr := jsonrpc.DecodeFrame(line)
	if derr != nil {
		c.t.Errorf("rcptest: undecodable server frame %q: %v", line, derr)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range fr.Members {
		switch {
		case m.Response != nil:
			if ch := c.pending[m.Response.ID.Key()]; ch != nil {
				ch <- m.Response
				delete(c.pending, m.Response.ID.Key())
			}
		case m.Request != nil && m.Request.IsNotification():
			c.notes = append(c.notes, *m.Request)
		default:
			c.t.Errorf("rcptest: unexpected server frame %s", line)
		}
	}
}

func (c *Client) failPending() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, ch := range c.pending {
		close(ch)
		delete(c.pending, k)
	}
}
