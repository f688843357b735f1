package federation_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/federation"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestHTTPBackendErrors: a downstream JSON-RPC error keeps its code and
// data; transport faults are -32010 (§16.2 counts them as failures).
func TestHTTPBackendErrors(t *testing.T) {
	remote := newSwappable(t)
	remote.serve(stub([]string{"x"}, nil, failing(rcp.CodeRateLimited)))
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	k := int64(3)
	for _, tc := range []struct {
		name   string
		b      *federation.HTTPBackend
		code   rcp.Code
		detail string
	}{
		{"remote error", connect(t, remote.URL+"/rcp"), rcp.CodeRateLimited, "injected"},
		{"unreachable", federation.NewHTTPBackend(down.URL+"/rcp", nil), rcp.CodeBackendUnavailable, ""},
		{"HTTP 500", federation.NewHTTPBackend(broken.URL+"/rcp", nil), rcp.CodeBackendUnavailable, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.b.Retrieve(context.Background(), &rcp.RetrieveParams{Query: rcp.TextQuery("q"), K: &k})
			e := rcp.AsError(err)
			if err == nil || e.Code != tc.code || tc.detail != "" && (e.Data == nil || e.Data.Detail != tc.detail) {
				t.Errorf("error = %v (data %+v), want code %d detail %q", err, dataOf(e), tc.code, tc.detail)
			}
		})
	}
}
