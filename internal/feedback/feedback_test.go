package feedback

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

func engineURL(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v != "" {
		return v
	}
	if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
		t.Fatalf("%s is unset but RCP_REQUIRE_ENGINES is set: start the engine (integration/*/start.sh)", name)
	}
	t.Skipf("SKIPPING: %s is unset (start the engine with integration/*/start.sh)", name)
	return ""
}

func b(v bool) *bool               { return &v }
func f(v float64) *float64         { return &v }
func raw(s string) json.RawMessage { return json.RawMessage(s) }

func event() retrieval.FeedbackEvent {
	return retrieval.FeedbackEvent{Caller: "key-a", Tenant: "acme", SessionID: "s-1", Query: "private query text",
		Signals: []rcp.FeedbackSignal{
			{HitID: raw(`"doc-1#3"`), Used: b(true), Helpful: b(true), Reward: f(0.75)},
			{HitID: raw(`42`), Helpful: b(false), PoisonSuspected: b(true)},
		}}
}

// TestSinkAppendsToRealIndex appends to a fresh index on the real
// Elasticsearch and OpenSearch and reads the documents back with a search:
// one per signal, tagged with key and tenant.
func TestSinkAppendsToRealIndex(t *testing.T) {
	for _, env := range []string{"RCP_ES_URL", "RCP_OS_URL"} {
		t.Run(env, func(t *testing.T) {
			base := engineURL(t, env)
			suffix := make([]byte, 4)
			_, _ = rand.Read(suffix)
			index := "rcp-feedback-test-" + hex.EncodeToString(suffix)
			t.Cleanup(func() {
				req, _ := http.NewRequest(http.MethodDelete, base+"/"+index, nil)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			})
			s, err := New(Options{Engine: "docs", Index: &IndexOptions{URL: base, Index: index, Refresh: true, Timeout: 30 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Record(context.Background(), event()); err != nil {
				t.Fatalf("Record: %v", err)
			}
			resp, err := http.Post(base+"/"+index+"/_search", "application/json",
				strings.NewReader(`{"size":10,"sort":[{"hit_id.keyword":"asc"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var sr struct {
				Hits struct {
					Hits []struct {
						Source Document `json:"_source"`
					} `json:"hits"`
				} `json:"hits"`
			}
			body, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(body, &sr); err != nil {
				t.Fatalf("search: %v: %s", err, body)
			}
			docs := sr.Hits.Hits
			if len(docs) != 2 {
				t.Fatalf("%d documents in %s, want 2: %s", len(docs), index, body)
			}
			d0, d1 := docs[0].Source, docs[1].Source // "42" < "doc-1#3"
			if d0.HitID != "42" || d1.HitID != "doc-1#3" {
				t.Fatalf("hit ids %q, %q", d0.HitID, d1.HitID)
			}
			for _, d := range []Document{d0, d1} {
				if d.Key != "key-a" || d.Tenant != "acme" || d.SessionID != "s-1" || d.Engine != "docs" || d.Timestamp == "" {
					t.Errorf("document not tagged: %+v", d)
				}
			}
			if d1.Reward == nil || *d1.Reward != 0.75 || d1.Used == nil || !*d1.Used || d0.PoisonSuspected == nil || !*d0.PoisonSuspected {
				t.Errorf("signal fields lost: %+v / %+v", d0, d1)
			}
		})
	}
}

// TestSinkCountsAndLogs: one log record per call (no query text unless
// LogBodies), the signals counted by kind on the meter.
func TestSinkCountsAndLogs(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	var logs bytes.Buffer
	s, err := New(Options{Engine: "docs", Meter: mp.Meter("test"), Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Record(context.Background(), event()); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != MetricSignals {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				kind, _ := dp.Attributes.Value("kind")
				got[kind.AsString()] += dp.Value
			}
		}
	}
	want := map[string]int64{"used": 1, "helpful": 1, "unhelpful": 1, "reward": 1, "poison": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("kind %s counted %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("kinds counted %v, want %v", got, want)
	}
	var rec map[string]any
	if err := json.Unmarshal(logs.Bytes(), &rec); err != nil {
		t.Fatalf("log: %v: %s", err, logs.String())
	}
	if rec["msg"] != "rcp feedback" || rec["key"] != "key-a" || rec["tenant"] != "acme" || rec["signals"] != float64(2) {
		t.Errorf("log record %v", rec)
	}
	if strings.Contains(logs.String(), "private query text") {
		t.Error("query text logged without LogBodies")
	}
}

// TestSinkIndexDown: an index that cannot be reached fails the call with
// -32010, and the error carries no credential.
func TestSinkIndexDown(t *testing.T) {
	s, err := New(Options{Index: &IndexOptions{URL: "http://127.0.0.1:1", Index: "fb", Password: "pw-sekret", Username: "u", Timeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Record(context.Background(), event())
	if re := rcp.AsError(err); re.Code != rcp.CodeBackendUnavailable || strings.Contains(re.Error(), "sekret") {
		t.Errorf("Record to a closed port: %v, want -32010 without the password", err)
	}
	for _, bad := range []IndexOptions{{URL: "http://u:p@h", Index: "fb"}, {URL: "http://h", Index: "Bad/Name"}, {URL: "ftp://h", Index: "fb"}} {
		if _, err := New(Options{Index: &bad}); err == nil {
			t.Errorf("New accepted %+v", bad)
		}
	}
}
