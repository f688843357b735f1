package opensearch

// Tests in this file run the adapter against sigv4Server, an httptest
// server that checks every request's SigV4 signature with the
// independent verifier (sigv4verify_test.go) and then replays the
// recorded OpenSearch 3.5.0 probe responses (testdata/probe). The
// Serverless test uses the same recordings for the calls Serverless
// answers (mapping, settings, count: the same OpenSearch APIs); it was
// not recorded against Amazon OpenSearch Serverless, and the fake STS
// answers in the shape AWS documents, not a recording.

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Credentials made up for the tests.
const (
	testAKID   = "AKIDTESTSIDECAR00001"
	testSecret = "sEcReT/for+the+sidecar+tests/0000000000"
	testToken  = "session-token-for-the-sidecar-tests"
)

// sigv4Server is a test server that refuses (403, as OpenSearch Service
// does) every request whose signature the verifier rejects, and answers
// the probe's paths with the recorded responses.
type sigv4Server struct {
	*httptest.Server
	mu       sync.Mutex
	paths    []string
	refusals []string
}

func newSigV4Server(t *testing.T, v sigv4Verifier) *sigv4Server {
	t.Helper()
	recorded := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "probe", recorded+"-"+name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	replies := map[string][]byte{
		"/": recorded("root"), "/_cat/plugins": recorded("plugins"), "/probe-fixture/_mapping": recorded("mapping"),
		"/probe-fixture/_settings": recorded("settings"), "/_search/pipeline": recorded("pipelines"),
		"/_cluster/settings": recorded("cluster"), "/probe-fixture/_count": recorded("count"),
		"/probe-fixture/_search": []byte(`{"took":1,"timed_out":false,"hits":{"total":{"value":0,"relation":"eq"},"max_score":null,"hits":[]}}`),
	}
	s := &sigv4Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.paths = append(s.paths, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if err := v.verify(r, body); err != nil {
			s.mu.Lock()
			s.refusals = append(s.refusals, err.Error())
			s.mu.Unlock()
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"message":"The request signature we calculated does not match the signature you provided."}`))
			return
		}
		reply, ok := replies[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"type":"resource_not_found_exception","reason":"no such path"},"status":404}`))
			return
		}
		_, _ = w.Write(reply)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sigv4Server) seen() (paths, refusals []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths), slices.Clone(s.refusals)
}

// isolateAWSEnv keeps the SDK's credential chain to what the test sets:
// no shared files, no instance metadata.
func isolateAWSEnv(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_PROFILE": "", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_ROLE_ARN": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_STS": "",
	} {
		t.Setenv(k, v)
	}
}

func openSigned(t *testing.T, url, service string) *adapter {
	t.Helper()
	cfg := testConfig()
	cfg.URLs, cfg.Writable = []string{url}, true
	cfg.AWS = &AWS{Region: "eu-west-1", Service: service}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := Factory.Open(context.Background(), cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a.(*adapter)
}

// TestSigV4SignsEveryRequest: with credentials from the environment
// (session token included), the probe, a search and a bulk write reach
// the server signed for es in eu-west-1, with the body's hash, and the
// verifier accepts every one; with a secret the server does not share,
// every request is refused and the probe fails without the secret in
// its error.
func TestSigV4SignsEveryRequest(t *testing.T) {
	isolateAWSEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", testAKID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", testSecret)
	t.Setenv("AWS_SESSION_TOKEN", testToken)
	v := sigv4Verifier{akid: testAKID, secret: testSecret, token: testToken, region: "eu-west-1", service: "es", now: time.Now}
	srv := newSigV4Server(t, v)
	a := openSigned(t, srv.URL, "")
	ctx := context.Background()
	ev, err := a.Probe(ctx)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if ev.Version != "3.5.0" || len(ev.TextFields) == 0 {
		t.Fatalf("evidence %+v", ev)
	}
	if _, err := a.http.do(ctx, http.MethodPost, "/probe-fixture/_search?size=3&q=caf%C3%A9+au+lait", []byte(`{"query":{"match_all":{}}}`), false); err != nil {
		t.Fatalf("search: %v", err)
	}
	if _, err := a.http.do(ctx, http.MethodPost, "/probe-fixture/_search", []byte("{\"index\":{}}\n{\"a\":1}\n"), true); err != nil {
		t.Fatalf("ndjson: %v", err)
	}
	paths, refusals := srv.seen()
	if len(refusals) != 0 || len(paths) != len(probeCalls("probe-fixture"))+2 {
		t.Fatalf("paths %v, refusals %v", paths, refusals)
	}

	wrong := newSigV4Server(t, sigv4Verifier{akid: testAKID, secret: testSecret + "x", token: testToken, region: "eu-west-1", service: "es", now: time.Now})
	b := openSigned(t, wrong.URL, "")
	_, err = b.Probe(ctx)
	if err == nil {
		t.Fatal("probe accepted by a server that refuses the signature")
	}
	if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), testToken) {
		t.Fatalf("error carries a credential: %v", err)
	}
	if code := b.ErrorCode(err); code == rcp.CodeInternalError || code == 0 {
		t.Fatalf("refused signature classified as %d", code)
	}
	if _, refusals := wrong.seen(); len(refusals) == 0 {
		t.Fatal("the wrong-secret server saw no request")
	}
}

// TestServerlessProbe: with service aoss the probe signs for aoss and asks
// only for the calls OpenSearch Serverless serves (mapping, settings,
// count), never GET /, _cat/plugins, _search/pipeline or
// _cluster/settings, and derives the same fields as from a full probe,
// saying in a note what it could not see.
func TestServerlessProbe(t *testing.T) {
	isolateAWSEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", testAKID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", testSecret)
	srv := newSigV4Server(t, sigv4Verifier{akid: testAKID, secret: testSecret, region: "eu-west-1", service: "aoss", now: time.Now})
	a := openSigned(t, srv.URL, ServiceAOSS)
	ev, err := a.Probe(context.Background())
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	paths, refusals := srv.seen()
	want := []string{"GET /probe-fixture/_mapping", "GET /probe-fixture/_settings", "GET /probe-fixture/_count"}
	if !slices.Equal(paths, want) || len(refusals) != 0 {
		t.Fatalf("paths %v (want %v), refusals %v", paths, want, refusals)
	}
	full, err := buildSchema(testConfig(), loadProbe(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Version != serverlessVersion || ev.NativeRRF || ev.NativeMMR || ev.DocCount != full.ev.DocCount {
		t.Fatalf("serverless evidence header %+v", ev)
	}
	for name, pair := range map[string][2]any{"text": {full.ev.TextFields, ev.TextFields},
		"vector": {full.ev.VectorFields, ev.VectorFields}, "filter": {full.ev.FilterFields, ev.FilterFields}} {
		if diff := cmp.Diff(pair[0], pair[1]); diff != "" {
			t.Errorf("serverless %s fields differ from the full probe's (-full +serverless):\n%s", name, diff)
		}
	}
	if !slices.ContainsFunc(ev.Notes, func(n string) bool { return strings.Contains(n, "OpenSearch Serverless") }) {
		t.Fatalf("no Serverless note in %q", ev.Notes)
	}
	if slices.ContainsFunc(ev.Notes, func(n string) bool { return strings.Contains(n, "not installed") }) {
		t.Fatalf("a note claims a plugin is missing, which Serverless cannot show: %q", ev.Notes)
	}
}

// TestSigV4WebIdentity: IRSA. With AWS_ROLE_ARN and
// AWS_WEB_IDENTITY_TOKEN_FILE (what EKS injects) and no static keys, the
// standard chain exchanges the token at STS (a test server answering
// AssumeRoleWithWebIdentity in the documented XML shape, reached through
// AWS_ENDPOINT_URL_STS) and signs with the temporary credentials it
// returns, session token included.
func TestSigV4WebIdentity(t *testing.T) {
	isolateAWSEnv(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("projected-service-account-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	const role = "arn:aws:iam::123456789012:role/rcp-sidecar"
	var mu sync.Mutex
	var calls []string
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		calls = append(calls, r.Form.Get("Action")+" "+r.Form.Get("RoleArn")+" "+r.Form.Get("WebIdentityToken"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, stsReply, xmlEscape(testAKID), xmlEscape(testSecret), xmlEscape(testToken), time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	}))
	t.Cleanup(sts.Close)
	t.Setenv("AWS_ROLE_ARN", role)
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile)
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	srv := newSigV4Server(t, sigv4Verifier{akid: testAKID, secret: testSecret, token: testToken, region: "eu-west-1", service: "es", now: time.Now})
	a := openSigned(t, srv.URL, ServiceES)
	if _, err := a.Probe(context.Background()); err != nil {
		t.Fatalf("probe with web identity credentials: %v", err)
	}
	if _, err := a.Probe(context.Background()); err != nil {
		t.Fatalf("second probe: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 || calls[0] != "AssumeRoleWithWebIdentity "+role+" projected-service-account-token" {
		t.Fatalf("STS calls %q, want one AssumeRoleWithWebIdentity with the role and token (credentials cached)", calls)
	}
}

const stsReply = `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <Credentials>
      <AccessKeyId>%s</AccessKeyId>
      <SecretAccessKey>%s</SecretAccessKey>
      <SessionToken>%s</SessionToken>
      <Expiration>%s</Expiration>
    </Credentials>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/rcp-sidecar/session</Arn>
      <AssumedRoleId>AROA000000000000:session</AssumedRoleId>
    </AssumedRoleUser>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>`

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
