package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// TestTypeScriptClient: the TypeScript SDK client (which validates
// structured content against a tool's output schema, tool errors
// included), over stdio (`mcp --demo`) and Streamable HTTP (`serve
// --demo`), lists the demo's tools, searches with a filter, receives a
// bad filter as a tool error whose text carries the RCP error an RCP
// client gets for the same retrieve (read from `serve --stdio`), and
// writes a document with index_add that a filtered search then finds.
func TestTypeScriptClient(t *testing.T) {
	how := "run integration/mcp/setup.sh and source integration/.work/mcp.env"
	node := itest.RequireEnv(t, "RCP_MCP_NODE", how)
	modules := itest.RequireEnv(t, "RCP_MCP_NODE_MODULES", how)
	bin := itest.BuildSidecar(t, t.TempDir())
	want := rcpError(t, bin, `{"query":"comets","filter":{"field":"colour","op":"eq","value":"x"}}`)
	if want.Message == "" || want.Data.Field != "filter.colour" {
		t.Fatalf("RCP error for the bad filter: %+v", want)
	}
	transports := map[string]func() plan{
		"stdio": func() plan { return plan{"command": bin, "args": []string{"mcp", "--demo"}} },
		"http":  func() plan { return plan{"http": serve(t, bin, "--demo")} },
	}
	for name, transport := range transports {
		t.Run(name, func(t *testing.T) {
			p := transport()
			p["query"], p["bad_field"] = "comets", "colour"
			p["filter"] = map[string]any{"field": "topic", "value": "astronomy"}
			p["add"] = map[string]any{"id": "ts-added-" + name, "text": "heliopause bow shock of the " + name + " probe",
				"meta": map[string]any{"topic": "astronomy"}}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, filepath.Join(itest.RepoRoot(t), "integration", "mcp", "ts", "check_client.cjs"), p.String())
			cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("check_client.cjs: %v\n--- transcript\n%s\n--- stderr (tail)\n%s", err, out.String(), tail(errb.String(), 3000))
			}
			t.Logf("TypeScript client over %s:\n%s", name, out.String())
			code, _ := json.Marshal(want.Code)
			for _, s := range []string{want.Message, string(code), `"filter.colour"`} {
				if !strings.Contains(out.String(), s) {
					t.Fatalf("the TypeScript client's output lacks %q of the RCP error", s)
				}
			}
		})
	}
}

// rcpErr is an RCP error response's error.
type rcpErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    struct {
		Field string `json:"field"`
	} `json:"data"`
}

// rcpError runs retrieve with params on `serve --stdio --demo` and
// returns the error it answers.
func rcpError(t *testing.T, bin, params string) rcpErr {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--stdio", "--demo", "--log-level", "error")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"client":{"name":"t","version":"0"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"retrieve","params":` + params + "}\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("serve --stdio: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var f struct {
			ID    int     `json:"id"`
			Error *rcpErr `json:"error"`
		}
		if json.Unmarshal([]byte(l), &f) == nil && f.ID == 2 && f.Error != nil {
			return *f.Error
		}
	}
	t.Fatalf("serve --stdio answered no error to retrieve %s:\n%s", params, out)
	return rcpErr{}
}
