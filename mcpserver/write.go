package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// addWriteTools adds index_add and index_delete over e, annotated as
// destructive: a write replaces a document with the same id, a delete
// removes documents.
func (s *Service) addWriteTools(srv *mcp.Server, e *Engine, required func() bool) {
	srv.AddTool(&mcp.Tool{
		Name:        s.toolName("index_add", e.Name),
		Title:       "Add documents to " + e.Name,
		Description: fmt.Sprintf("Add or replace documents in %s. A document with an existing id replaces it. Returns the ids written.", e.Name),
		InputSchema: s.addSchema,
		Annotations: &mcp.ToolAnnotations{Title: "Add documents to " + e.Name, DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
	}, s.write(e, required, rcp.MethodIndexAdd, checkIndexAdd, func(ctx context.Context, raw json.RawMessage) (any, error) {
		p, perr := rcp.DecodeParams[rcp.IndexAddParams](raw)
		if perr != nil {
			return nil, perr
		}
		return e.Backend.IndexAdd(ctx, p)
	}))
	srv.AddTool(&mcp.Tool{
		Name:        s.toolName("index_delete", e.Name),
		Title:       "Delete documents from " + e.Name,
		Description: fmt.Sprintf("Delete documents from %s by id. Returns how many were deleted.", e.Name),
		InputSchema: s.deleteSchema,
		Annotations: &mcp.ToolAnnotations{Title: "Delete documents from " + e.Name, DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, s.write(e, required, rcp.MethodIndexDelete, checkIndexDelete, func(ctx context.Context, raw json.RawMessage) (any, error) {
		p, perr := rcp.DecodeParams[rcp.IndexDeleteParams](raw)
		if perr != nil {
			return nil, perr
		}
		return e.Backend.IndexDelete(ctx, p)
	}))
}

// write is the handler of a write tool: arguments are the method's params
// as they are, decoded strictly.
func (s *Service) write(e *Engine, required func() bool, method string, check argsCheck, run func(context.Context, json.RawMessage) (any, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, berr := bind(ctx, req, required)
		if berr != nil {
			return s.errorResult(berr), nil
		}
		raw := req.Params.Arguments
		if len(raw) == 0 || string(raw) == "null" {
			raw = json.RawMessage("{}")
		}
		ctx, done := s.observe(ctx, e, method, raw)
		if aerr := check(raw, s.o.MaxWriteBatch); aerr != nil {
			done(aerr)
			return s.errorResult(aerr), nil
		}
		ctx, cancel := s.withDeadline(ctx)
		defer cancel()
		res, err := run(relay(ctx, req), raw)
		done(err)
		if err != nil {
			return s.errorResult(err), nil
		}
		b, err := json.Marshal(res)
		if err != nil {
			return s.errorResult(rcp.NewError(rcp.CodeInternalError, "result could not be encoded")), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: res}, nil
	}
}

// probeURI names engine's probe resource.
func probeURI(engine string) string { return "rcp-sidecar://engines/" + engine + "/probe" }

func (s *Service) probeResource(e *Engine) *mcp.Resource {
	return &mcp.Resource{
		URI:         probeURI(e.Name),
		Name:        e.Name + "-probe",
		Title:       "What " + e.Name + " serves, and why",
		Description: "The probe of " + e.Name + ": the capabilities advertised (every filterable field with its type and operators, modes, limits) with the reason for each.",
		MIMEType:    "application/json",
	}
}

func (s *Service) readProbe(e *Engine) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		b, err := json.MarshalIndent(e.Explain(), "", "  ")
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: probeURI(e.Name), MIMEType: "application/json", Text: string(b)}}}, nil
	}
}

// relay passes the retrieval's progress and log notifications to the MCP
// client: progress when the call carries a progress token, logs at the
// level the client set.
func relay(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req == nil || req.Session == nil || req.Params == nil {
		return ctx
	}
	return rcp.WithReporter(ctx, &reporter{ctx: ctx, ss: req.Session, token: req.Params.GetProgressToken()})
}

// reporter is an rcp.Reporter over an MCP session.
type reporter struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
}

// ProgressEnabled reports whether the client asked for progress.
func (r *reporter) ProgressEnabled() bool { return r.token != nil }

// Progress implements rcp.Reporter.
func (r *reporter) Progress(stage string, progress float64, message string, _ []rcp.Hit) {
	if r.token == nil {
		return
	}
	msg := stage
	if message != "" {
		msg += ": " + message
	}
	_ = r.ss.NotifyProgress(r.ctx, &mcp.ProgressNotificationParams{ProgressToken: r.token, Progress: progress, Total: 1, Message: msg})
}

// LogEnabled reports whether the client takes log messages at level, so
// that the retrieval builds none the session would drop.
func (r *reporter) LogEnabled(level string) bool {
	return r.ss.LogEnabled(r.ctx, mcp.LoggingLevel(level))
}

// Log implements rcp.Reporter.
func (r *reporter) Log(level, logger, message string, data map[string]any) {
	d := map[string]any{"message": message}
	for k, v := range data {
		d[k] = v
	}
	_ = r.ss.Log(r.ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(level), Logger: logger, Data: d})
}

// maxPeekBytes bounds the body callsWriteTool reads.
const maxPeekBytes = 8 << 20

// callsWriteTool reports whether r's JSON-RPC body (one message or a
// batch) calls a write tool of s. The body is read, at most maxPeekBytes,
// and put back for the handler; a body that does not decode calls none.
func (s *Service) callsWriteTool(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPeekBytes+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil || len(body) > maxPeekBytes {
		return false
	}
	type message struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var msgs []message
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(body, &msgs) != nil {
			return false
		}
	} else {
		var m message
		if json.Unmarshal(body, &m) != nil {
			return false
		}
		msgs = append(msgs, m)
	}
	for _, m := range msgs {
		if m.Method == "tools/call" && s.isWriteTool(m.Params.Name) {
			return true
		}
	}
	return false
}

// isWriteTool reports whether name is the name of a write tool of s.
func (s *Service) isWriteTool(name string) bool {
	for i := range s.o.Engines {
		e := &s.o.Engines[i]
		if name == s.toolName("index_add", e.Name) || name == s.toolName("index_delete", e.Name) {
			return true
		}
	}
	return false
}
