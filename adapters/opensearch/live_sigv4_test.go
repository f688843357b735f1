package opensearch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// TestLiveSigV4 runs the adapter with aws set against the live node
// through a reverse proxy in the test that checks every request's SigV4
// signature with the independent verifier (sigv4verify_test.go) before
// forwarding it, unchanged, to the node. The node itself runs without
// the security plugin and ignores the signature: what this proves is that
// real probe, bulk-write and search traffic is signed correctly and still
// reaches and satisfies a real OpenSearch once signed (bodies intact).
func TestLiveSigV4(t *testing.T) {
	base := liveURL(t)
	isolateAWSEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", testAKID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", testSecret)
	t.Setenv("AWS_SESSION_TOKEN", testToken)
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	v := sigv4Verifier{akid: testAKID, secret: testSecret, token: testToken, region: "eu-west-1", service: "es", now: time.Now}
	var mu sync.Mutex
	var checked int
	var refusals []string
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		err := v.verify(r, body)
		mu.Lock()
		checked++
		if err != nil {
			refusals = append(refusals, r.Method+" "+r.URL.Path+": "+err.Error())
		}
		mu.Unlock()
		if err != nil {
			http.Error(w, `{"message":"signature refused"}`, http.StatusForbidden)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := newLiveIndex(ctx, t, base, map[string]any{"properties": map[string]any{
		"text": map[string]any{"type": "text"}, "lang": map[string]any{"type": "keyword"}}})
	a := openWritable(ctx, t, srv.URL, name, func(c *Config) { c.AWS = &AWS{Region: "eu-west-1", Service: ServiceES} })
	ev, err := a.Probe(ctx)
	if err != nil {
		t.Fatalf("signed probe: %v (refusals %v)", err, refusals)
	}
	if len(ev.TextFields) != 1 || ev.Version == "" {
		t.Fatalf("evidence %+v", ev)
	}
	docs := []adapters.Document{{ID: "x1", Text: "signed café rocket", Meta: map[string]any{"lang": "fr"}},
		{ID: "x2", Text: "unsigned nothing", Meta: map[string]any{"lang": "en"}}}
	if err := a.(adapters.Writer).Upsert(ctx, docs); err != nil {
		t.Fatalf("signed bulk write: %v", err)
	}
	c := liveSearch(t, a.(*adapter), &adapters.SearchRequest{Stage: adapters.StageLexical, Text: "café rocket",
		TextFields: ev.TextFields, K: 2, CandidateK: 2})
	if len(c.Hits) != 1 || c.Hits[0].ID != "x1" {
		t.Fatalf("signed search: hits %+v", c.Hits)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refusals) != 0 || checked < len(probeCalls(name))+2 {
		t.Fatalf("%d requests checked, refusals %v", checked, refusals)
	}
}
