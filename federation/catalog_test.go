package federation_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

func post(t *testing.T, url, body string, hdr map[string]string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := rcptest.ValidateFrame(b); resp.StatusCode == http.StatusOK && err != nil {
		t.Errorf("frame violates the schema: %v\n%s", err, b)
	}
	return resp.StatusCode, b
}

// catalogServer serves an aggregator of two engines (one of them remote)
// with CatalogHandler; in-process engines get /engines/<id>/rcp on the
// request's host.
func catalogServer(t *testing.T, opts server.Options, allow func(context.Context, string) bool) (*httptest.Server, string) {
	remote := newSwappable(t)
	remote.serve(memEngine(t, "bio"))
	agg := newAgg(t, []federation.Engine{
		{ID: "astro", Backend: memEngine(t, "astro")},
		{ID: "far", Backend: connect(t, remote.URL+"/rcp")},
	}, federation.Options{Name: "gw", Allow: allow})
	ep := func(r *http.Request, id string) *federation.Endpoint {
		return &federation.Endpoint{Transport: "http", URL: "http://" + r.Host + "/engines/" + id + "/rcp"}
	}
	s := httptest.NewServer(agg.CatalogHandler(server.New(agg, opts).Handler(), ep))
	t.Cleanup(s.Close)
	return s, remote.URL + "/rcp"
}

// TestCatalogListHTTP: catalog/list answers with every engine's identity,
// capabilities and endpoint — by path method and inside a batch — and the
// result validates against the schema.
func TestCatalogListHTTP(t *testing.T) {
	s, farURL := catalogServer(t, server.Options{}, nil)
	host := strings.TrimPrefix(s.URL, "http://")
	for _, tc := range []struct{ name, path, body string }{
		{"path", "/rcp/catalog/list", `{"jsonrpc":"2.0","id":7,"method":"catalog/list","params":{}}`},
		{"batch", "/rcp", `[{"jsonrpc":"2.0","id":"p","method":"ping"},{"jsonrpc":"2.0","id":7,"method":"catalog/list"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, s.URL+tc.path, tc.body, nil)
			if code != http.StatusOK {
				t.Fatalf("HTTP %d: %s", code, body)
			}
			result := catalogResult(t, body)
			if err := rcptest.ValidateResult(rcp.MethodCatalogList, result); err != nil {
				t.Errorf("catalog/list result: %v\n%s", err, result)
			}
			var cl federation.CatalogResult
			if err := json.Unmarshal(result, &cl); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"astro": "http://" + host + "/engines/astro/rcp", "far": farURL}
			if len(cl.Engines) != 2 {
				t.Fatalf("engines = %+v", cl.Engines)
			}
			for _, e := range cl.Engines {
				if e.Endpoint == nil || e.Endpoint.URL != want[e.ID] || e.Capabilities.Retrieve == nil || e.Server.Name == "" {
					t.Errorf("entry %+v endpoint %+v, want url %s", e, e.Endpoint, want[e.ID])
				}
			}
		})
	}
}

// catalogResult extracts the result of the member with id 7.
func catalogResult(t *testing.T, body []byte) json.RawMessage {
	t.Helper()
	var ms []struct {
		ID     json.RawMessage
		Result json.RawMessage
		Error  *rcp.Error
	}
	if body[0] != '[' {
		body = append(append([]byte{'['}, body...), ']')
	}
	if err := json.Unmarshal(body, &ms); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if string(m.ID) == "7" {
			if m.Error != nil {
				t.Fatalf("catalog/list error %+v", m.Error)
			}
			return m.Result
		}
	}
	t.Fatalf("no answer with id 7 in %s", body)
	return nil
}

// TestCatalogListGates: the server's own gates still apply (an
// uninitialized stateful session gets -32001), and engines the caller may
// not use are not listed.
func TestCatalogListGates(t *testing.T) {
	s, _ := catalogServer(t, server.Options{Stateful: true}, nil)
	_, body := post(t, s.URL+"/rcp", `{"jsonrpc":"2.0","id":7,"method":"catalog/list"}`, nil)
	var resp struct{ Error *rcp.Error }
	if err := json.Unmarshal(body, &resp); err != nil || resp.Error == nil || resp.Error.Code != rcp.CodeNotInitialized {
		t.Errorf("uninitialized stateful catalog/list = %s", body)
	}
	only := func(_ context.Context, id string) bool { return id == "astro" }
	s2, _ := catalogServer(t, server.Options{}, only)
	_, body = post(t, s2.URL+"/rcp", `{"jsonrpc":"2.0","id":7,"method":"catalog/list"}`, nil)
	var cl federation.CatalogResult
	if err := json.Unmarshal(catalogResult(t, body), &cl); err != nil || len(cl.Engines) != 1 || cl.Engines[0].ID != "astro" {
		t.Errorf("filtered catalog = %s", body)
	}
}
