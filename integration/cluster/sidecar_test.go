package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// serve is one running `rcp-sidecar serve` over one backend.
type serve struct {
	*itest.Serve
	t    *testing.T
	base string // http://host:port
}

// backend is the settings of the one backend a serve process fronts.
type backend struct {
	name     string // default: the engine's name
	urls     []string
	index    string
	pit      bool
	writable bool
}

// config is the YAML of a serve process over b: BM25 over title and text
// with BEIR's tie_breaker, as the engine's own query below. The request
// deadline and the per-attempt timeout are raised from 10s and 5s: three
// JVMs share two busy cores here, and a search of the cluster can take
// seconds without anything failing.
func (c *cluster) config(b backend) string {
	var s strings.Builder
	fmt.Fprintf(&s, "server:\n  deadline: 30s\nbackends:\n  - name: %s\n    engine: %s\n    resilience: {timeout: 10s}\n    settings:\n", cmpOr(b.name, c.e.name), c.e.name)
	fmt.Fprintf(&s, "      urls: [%s]\n      index: %s\n", strings.Join(b.urls, ", "), b.index)
	s.WriteString("      text_fields: [{name: title}, {name: text}]\n      content_field: text\n      title_field: title\n")
	fmt.Fprintf(&s, "      tie_breaker: %v\n      disable_compression: true\n", tieBreaker)
	if b.pit {
		s.WriteString("      pit: true\n")
	}
	if b.writable {
		s.WriteString("      writable: true\n")
	}
	fmt.Fprintf(&s, "    policy:\n      max_k: 200\n      writable: %v\n", b.writable)
	return s.String()
}

// startServe runs bin serve over b and waits for its address.
func (c *cluster) startServe(bin string, b backend) *serve {
	t := c.t
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(c.config(b)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &serve{Serve: itest.StartServe(t, bin, cfg, 90*time.Second), t: t}
	s.base = s.Base()
	s.AwaitReady(hc, 90*time.Second)
	return s
}

// readyz is GET /readyz: the status and body.
func (s *serve) readyz() (int, string) {
	resp, err := hc.Get(s.base + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// rpcError is an RCP error as a client sees it.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    struct {
		Retryable    *bool  `json:"retryable"`
		RetryAfterMs int64  `json:"retryAfterMs"`
		Detail       string `json:"detail"`
	} `json:"data"`
}

func (e *rpcError) String() string {
	if e == nil {
		return "<nil>"
	}
	r := "unset"
	if e.Data.Retryable != nil {
		r = fmt.Sprint(*e.Data.Retryable)
	}
	return fmt.Sprintf("%d %q (retryable %s) %s", e.Code, e.Message, r, e.Data.Detail)
}

// retryable reports data.retryable.
func (e *rpcError) retryable() bool { return e.Data.Retryable != nil && *e.Data.Retryable }

// hit is one retrieved hit.
type hit struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
}

// page is one retrieve answer.
type page struct {
	Hits         []hit  `json:"hits"`
	NextCursor   string `json:"nextCursor"`
	IndexVersion string `json:"indexVersion"`
	Usage        struct {
		Notes []string `json:"notes"`
	} `json:"usage"`
}

var rcpClient = &http.Client{Timeout: 30 * time.Second}

// call POSTs one RCP request; a transport failure or an unparsable answer
// fails the test.
func (s *serve) call(method string, params any, out any) *rpcError {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := rcpClient.Post(s.base+"/rcp/"+method, "application/json", bytes.NewReader(body))
	if err != nil {
		s.t.Errorf("%s: %v", method, err)
		return &rpcError{Code: -1, Message: err.Error()}
	}
	defer resp.Body.Close()
	var f struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&f); err != nil {
		s.t.Errorf("%s: HTTP %d: %v", method, resp.StatusCode, err)
		return &rpcError{Code: -1, Message: err.Error()}
	}
	if f.Error != nil {
		return f.Error
	}
	if out != nil {
		if err := json.Unmarshal(f.Result, out); err != nil {
			s.t.Errorf("%s result: %v", method, err)
		}
	}
	return nil
}

// retrieve is one sparse retrieve of query, k hits, from cursor when set.
func (s *serve) retrieve(query string, k int, cursor string) (page, *rpcError) {
	params := map[string]any{"query": query, "k": k, "mode": "sparse"}
	if cursor != "" {
		params["cursor"] = cursor
	}
	var p page
	err := s.call("retrieve", params, &p)
	return p, err
}
