// Package feedback records the signals of RCP feedback calls (§7.16):
// every call becomes one structured log record ("rcp feedback", at info
// level, on the sidecar's slog logger — the module has no OpenTelemetry
// logs SDK, so the OTLP/collector path is the log pipeline's), every
// signal is counted in the rcp_feedback_signals_total metric by kind, and,
// when an index is configured, every signal is appended to an
// Elasticsearch or OpenSearch index as one document tagged with the
// caller's API key id and tenant, so that teams can mine it later.
//
// Signals are untrusted, advisory input (§7.16, §15.2): they are stored
// as data, never acted upon, and the query text is logged only when
// LogBodies is set (§15.6).
package feedback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/rcp-sidecar/rcp-sidecar/internal/fetch"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// MetricSignals is the counter of feedback signals, by kind and engine.
const MetricSignals = "rcp.feedback.signals"

// Options configure a Sink.
type Options struct {
	// Engine labels the records and the metric (the backend name).
	Engine string
	// Logger receives one record per call; nil discards them.
	Logger *slog.Logger
	// LogBodies logs the query text (off by default, §15.6).
	LogBodies bool
	// Meter, when set, counts signals (MetricSignals).
	Meter metric.Meter
	// Index, when set, appends every signal to an index.
	Index *IndexOptions
}

// IndexOptions name an Elasticsearch or OpenSearch index to append to.
type IndexOptions struct {
	// URL is the engine's base URL (no credentials in it).
	URL string
	// Index is the target index name (created on first write by the
	// engine's automatic index creation, or beforehand by the operator).
	Index string
	// Username/Password (basic), APIKey (Elasticsearch "ApiKey") or
	// Bearer authenticate; at most one scheme.
	Username, Password, APIKey, Bearer string
	// Timeout bounds one append (default 5s).
	Timeout time.Duration
	// Refresh asks the engine to make the documents searchable before it
	// answers ("wait_for"); for tests and low volumes.
	Refresh bool
	// HTTPClient overrides the default client (TLS settings).
	HTTPClient *http.Client
}

// Sink implements retrieval.FeedbackSink.
type Sink struct {
	o       Options
	log     *slog.Logger
	counter metric.Int64Counter
	bulkURL string
	client  *http.Client
}

var _ retrieval.FeedbackSink = (*Sink)(nil)

// indexName is what Elasticsearch and OpenSearch accept as an index name
// (lower case, no path or wildcard characters), kept strict.
var indexName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,200}$`)

// New validates o.
func New(o Options) (*Sink, error) {
	s := &Sink{o: o, log: o.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if o.Meter != nil {
		c, err := o.Meter.Int64Counter(MetricSignals, metric.WithUnit("{signal}"),
			metric.WithDescription("RCP feedback signals received, by kind (used, cited, helpful, unhelpful, reward, poison, injection) and engine."))
		if err != nil {
			return nil, fmt.Errorf("feedback: metric: %w", err)
		}
		s.counter = c
	}
	if ix := o.Index; ix != nil {
		u, err := url.Parse(ix.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return nil, errors.New("feedback.index: url must be an absolute http(s) URL without credentials")
		}
		if !indexName.MatchString(ix.Index) {
			return nil, fmt.Errorf("feedback.index: %q is not a valid index name", ix.Index)
		}
		if ix.Timeout <= 0 {
			ix.Timeout = 5 * time.Second
		}
		s.client = ix.HTTPClient
		if s.client == nil {
			s.client = &http.Client{Timeout: ix.Timeout}
		}
		s.client = fetch.Rule{}.Client(s.client) // redirects re-checked (internal/fetch)
		s.bulkURL = strings.TrimRight(ix.URL, "/") + "/" + ix.Index + "/_bulk"
		if ix.Refresh {
			s.bulkURL += "?refresh=wait_for"
		}
	}
	return s, nil
}

// Document is one signal as appended to the index.
type Document struct {
	Timestamp          string   `json:"@timestamp"`
	Engine             string   `json:"engine,omitempty"`
	Key                string   `json:"key,omitempty"`
	Tenant             string   `json:"tenant,omitempty"`
	SessionID          string   `json:"session_id,omitempty"`
	Query              string   `json:"query,omitempty"`
	HitID              string   `json:"hit_id"`
	Used               *bool    `json:"used,omitempty"`
	Cited              *bool    `json:"cited,omitempty"`
	Helpful            *bool    `json:"helpful,omitempty"`
	Reward             *float64 `json:"reward,omitempty"`
	PoisonSuspected    *bool    `json:"poison_suspected,omitempty"`
	InjectionSuspected *bool    `json:"injection_suspected,omitempty"`
}

// Record logs, counts and (when configured) appends the signals of ev. An
// index that cannot be written fails the call with -32010 so that the
// client knows the signals were not stored.
func (s *Sink) Record(ctx context.Context, ev retrieval.FeedbackEvent) error {
	kinds := s.count(ctx, ev.Signals)
	attrs := []any{"engine", s.o.Engine, "key", ev.Caller, "tenant", ev.Tenant, "session_id", ev.SessionID,
		"signals", len(ev.Signals), "kinds", kinds}
	if s.o.LogBodies {
		attrs = append(attrs, "query", ev.Query)
	}
	s.log.InfoContext(ctx, "rcp feedback", attrs...)
	if s.bulkURL == "" || len(ev.Signals) == 0 {
		return nil
	}
	if err := s.append(ctx, ev); err != nil {
		s.log.WarnContext(ctx, "rcp feedback not stored", "engine", s.o.Engine, "err", err.Error())
		return rcp.Retryable(rcp.CodeBackendUnavailable, 0, "feedback could not be stored")
	}
	return nil
}

// count adds each signal's kinds to the metric and returns the totals.
func (s *Sink) count(ctx context.Context, sigs []rcp.FeedbackSignal) map[string]int {
	kinds := map[string]int{}
	for _, sg := range sigs {
		if sg.Used != nil && *sg.Used {
			kinds["used"]++
		}
		if sg.Cited != nil && *sg.Cited {
			kinds["cited"]++
		}
		if sg.Helpful != nil && *sg.Helpful {
			kinds["helpful"]++
		} else if sg.Helpful != nil {
			kinds["unhelpful"]++
		}
		if sg.Reward != nil {
			kinds["reward"]++
		}
		if sg.PoisonSuspected != nil && *sg.PoisonSuspected {
			kinds["poison"]++
		}
		if sg.InjectionSuspected != nil && *sg.InjectionSuspected {
			kinds["injection"]++
		}
	}
	if s.counter != nil {
		for k, n := range kinds {
			s.counter.Add(ctx, int64(n), metric.WithAttributes(attribute.String("kind", k), attribute.String("engine", s.o.Engine)))
		}
	}
	return kinds
}

// append sends one _bulk request with a create action per signal.
func (s *Sink) append(ctx context.Context, ev retrieval.FeedbackEvent) error {
	var body bytes.Buffer
	now := time.Now().UTC().Format(time.RFC3339Nano)
	enc := json.NewEncoder(&body)
	for _, sg := range ev.Signals {
		body.WriteString(`{"create":{}}` + "\n")
		d := Document{Timestamp: now, Engine: s.o.Engine, Key: ev.Caller, Tenant: ev.Tenant, SessionID: ev.SessionID,
			Query: ev.Query, HitID: hitID(sg.HitID), Used: sg.Used, Cited: sg.Cited, Helpful: sg.Helpful, Reward: sg.Reward,
			PoisonSuspected: sg.PoisonSuspected, InjectionSuspected: sg.InjectionSuspected}
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.Index.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.bulkURL, &body)
	if err != nil {
		return errors.New("bulk request could not be built")
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	ix := s.o.Index
	switch {
	case ix.APIKey != "":
		req.Header.Set("Authorization", "ApiKey "+ix.APIKey)
	case ix.Bearer != "":
		req.Header.Set("Authorization", "Bearer "+ix.Bearer)
	case ix.Username != "":
		req.SetBasicAuth(ix.Username, ix.Password)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return errors.New("index unreachable")
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("index answered HTTP %d", resp.StatusCode)
	}
	var br struct {
		Errors bool `json:"errors"`
	}
	if json.Unmarshal(raw, &br) != nil || br.Errors {
		return errors.New("index refused some feedback documents")
	}
	return nil
}

// hitID is the hit id as the client sent it: a JSON string's value, or a
// number's text.
func hitID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
