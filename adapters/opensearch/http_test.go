package opensearch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestDisableCompression: the client asks for gzip unless told not to,
// and reads a gzipped reply either way.
func TestDisableCompression(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Accept-Encoding")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		disable bool
		want    string
	}{{false, "gzip"}, {true, ""}} {
		cfg := DefaultConfig()
		cfg.URLs, cfg.Index, cfg.DisableCompression = []string{srv.URL}, "docs", tc.disable
		c, err := newClient(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.do(context.Background(), http.MethodGet, "/", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want || string(res.Body) != `{"ok":true}` {
			t.Errorf("disable_compression=%v: Accept-Encoding %q (want %q), body %s", tc.disable, got, tc.want, res.Body)
		}
	}
}
