// Package embedding provides text embedders for the sidecar: a client for
// any OpenAI-compatible /v1/embeddings endpoint.
package embedding

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/internal/fetch"
	"github.com/rcp-sidecar/rcp-sidecar/internal/h1"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Defaults applied by NewOpenAI to zero-valued options.
const (
	DefaultBatchSize   = 64
	DefaultMaxRetries  = 3
	DefaultTimeout     = 30 * time.Second
	DefaultBackoffBase = 200 * time.Millisecond
	DefaultBackoffMax  = 5 * time.Second
)

// Wire formats of float embeddings (OpenAIOptions.EncodingFormat).
const (
	// FormatBase64 asks for each vector as base64 of its little-endian
	// float32 values (OpenAI's "encoding_format": "base64"): about a
	// quarter of the bytes of the decimal array, and no decimal parsing.
	FormatBase64 = "base64"
	// FormatFloat asks for each vector as an array of numbers.
	FormatFloat = "float"
)

// Kinds accepted by Embed (§7.3 embed.kind); "" means unspecified.
const (
	KindQuery    = "query"
	KindDocument = "document"
)

// OpenAIOptions configures an OpenAI-compatible embedding client.
type OpenAIOptions struct {
	// BaseURL is the server root, e.g. http://127.0.0.1:8000; requests go to
	// BaseURL + "/v1/embeddings". A BaseURL already ending in /v1 is accepted.
	BaseURL string
	// Model is sent as "model" and is the default Identity.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// Dimension is the required vector length. 0 learns it from the first
	// response (Dimension() reports 0 until then; see Probe).
	Dimension int
	// BatchSize caps the inputs per HTTP request (default 64).
	BatchSize int
	// MaxRetries bounds retries of one request on 429, 5xx and connection
	// errors (default 3; negative disables retries).
	MaxRetries int
	// Timeout bounds one Embed call, retries included (default 30s).
	Timeout time.Duration
	// HTTPClient overrides the default client, whose transport keeps up
	// to MaxIdleConnsPerHost connections to the server between calls.
	HTTPClient *http.Client
	// QueryPrefix and DocumentPrefix are prepended client-side to each text
	// for kind "query" and "document" (e5 models want "query: " and
	// "passage: "). Leave them empty when the server prefixes by itself.
	QueryPrefix, DocumentPrefix string
	// SendInputType adds "input_type": kind to each request whose kind is
	// not empty, for servers that apply asymmetric prefixes themselves.
	SendInputType bool
	// Identity overrides the embed.identity reported (default Model).
	Identity string
	// Element is the type of the vectors asked for: capability.ElementFloat
	// (the default) or capability.ElementInt8, which asks the server for
	// int8 embeddings ("encoding_format": "int8", and Cohere's
	// "embedding_types": ["int8"]) and refuses any answer whose every value
	// is not an integer in [-128, 127]. Int8 vectors search Elasticsearch
	// byte and OpenSearch byte vector fields.
	Element capability.Element
	// EncodingFormat is how float vectors are asked for: FormatBase64 (the
	// default) or FormatFloat. Either answer is read, whatever was asked.
	// Until a base64 request has been answered, a server that refuses one
	// (HTTP 400 or 422) is asked again for floats, and for floats from
	// then on when that is answered. Int8 vectors are always asked for as
	// int8 arrays.
	EncodingFormat string
	// BackoffBase and BackoffMax shape the exponential backoff with full
	// jitter between retries (defaults 200ms and 5s).
	BackoffBase, BackoffMax time.Duration
}

// OpenAI is an adapters.Embedder backed by an OpenAI-compatible endpoint.
// It is safe for concurrent use.
type OpenAI struct {
	opts     OpenAIOptions
	endpoint string
	client   *http.Client
	dim      atomic.Int64
	// format is what the server is known to answer: formatUnknown until
	// a base64 request is answered (formatBase64) or refused where the
	// same batch asked for floats is answered (formatFloats).
	format atomic.Int32
}

// States of OpenAI.format.
const (
	formatUnknown int32 = iota
	formatBase64
	formatFloats
)

var (
	_ adapters.Embedder  = (*OpenAI)(nil)
	_ adapters.Elementer = (*OpenAI)(nil)
)

// NewOpenAI validates opts, applies defaults and returns a client. It does
// no I/O; call Probe to check the server and learn an unset dimension.
func NewOpenAI(opts OpenAIOptions) (*OpenAI, error) {
	if err := validate(opts); err != nil {
		return nil, err
	}
	opts = withDefaults(opts)
	o := &OpenAI{opts: opts, endpoint: endpoint(opts.BaseURL), client: opts.HTTPClient}
	o.dim.Store(int64(opts.Dimension))
	return o, nil
}

func validate(opts OpenAIOptions) error {
	switch {
	case opts.BaseURL == "":
		return errors.New("embedding: BaseURL is required")
	case !strings.HasPrefix(opts.BaseURL, "http://") && !strings.HasPrefix(opts.BaseURL, "https://"):
		return fmt.Errorf("embedding: BaseURL %q must be http(s)", opts.BaseURL)
	case opts.Model == "":
		return errors.New("embedding: Model is required")
	case opts.Dimension < 0 || opts.BatchSize < 0 || opts.Timeout < 0:
		return errors.New("embedding: Dimension, BatchSize and Timeout must not be negative")
	case opts.Element != "" && opts.Element != capability.ElementFloat && opts.Element != capability.ElementInt8:
		return fmt.Errorf("embedding: Element %q must be %q or %q", opts.Element, capability.ElementFloat, capability.ElementInt8)
	case opts.EncodingFormat != "" && opts.EncodingFormat != FormatBase64 && opts.EncodingFormat != FormatFloat:
		return fmt.Errorf("embedding: EncodingFormat %q must be %q or %q", opts.EncodingFormat, FormatBase64, FormatFloat)
	}
	return nil
}

func withDefaults(o OpenAIOptions) OpenAIOptions {
	o.BatchSize = orDefault(o.BatchSize, DefaultBatchSize)
	o.MaxRetries = orDefault(o.MaxRetries, DefaultMaxRetries)
	o.MaxRetries = max(o.MaxRetries, 0)
	o.Timeout = orDefault(o.Timeout, DefaultTimeout)
	o.BackoffBase = orDefault(o.BackoffBase, DefaultBackoffBase)
	o.BackoffMax = orDefault(o.BackoffMax, DefaultBackoffMax)
	o.Identity = orDefault(o.Identity, o.Model)
	o.Element = o.Element.OrFloat()
	o.EncodingFormat = orDefault(o.EncodingFormat, FormatBase64)
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: h1.New(pooledTransport())}
	}
	o.HTTPClient = fetch.Rule{}.Client(o.HTTPClient) // redirects re-checked (internal/fetch)
	return o
}

// MaxIdleConnsPerHost is how many idle connections the default client
// keeps to the embedding server. Go's default transport keeps two, so
// under more concurrent queries than that every call beyond two dialled
// (and later closed) a connection of its own.
const MaxIdleConnsPerHost = 64

// MaxConnsPerHost bounds the default client's connections to the
// embedding server, dialling ones included; a call beyond it waits for a
// free connection until its deadline. Without the bound, a server that
// stops accepting connections (its listen backlog full) gets a new dial
// for every query, each outliving its cancelled call until the dial
// timeout — thousands of goroutines under a fast stream of requests
// that fail elsewhere (an open breaker) after embedding their query.
const MaxConnsPerHost = 64

// pooledTransport is the default client's settings; h1 makes each call
// on the caller's goroutine over them (internal/h1).
func pooledTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	t.MaxConnsPerHost = MaxConnsPerHost
	return t
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func endpoint(base string) string {
	base = strings.TrimRight(base, "/")
	base = strings.TrimSuffix(base, "/v1")
	return base + "/v1/embeddings"
}

// Dimension is the vector length: the configured one, or the one learned
// from the first response (0 before it).
func (o *OpenAI) Dimension() int { return int(o.dim.Load()) }

// Identity names the model, for embed.identity (§15.7).
func (o *OpenAI) Identity() string { return o.opts.Identity }

// Element is the type of the returned vectors' components
// (adapters.Elementer).
func (o *OpenAI) Element() capability.Element { return o.opts.Element }

// BatchLimit is the number of inputs sent per request (embed.batchLimit).
func (o *OpenAI) BatchLimit() int { return o.opts.BatchSize }

// Probe embeds one short text to check that the server answers, that it
// answers int8 requests with int8 values, and, when no Dimension was
// configured, to learn it.
func (o *OpenAI) Probe(ctx context.Context) error {
	_, err := o.Embed(ctx, []string{"probe"}, KindQuery)
	return err
}

// Embed returns one vector per text, in order, sending at most BatchSize
// texts per request. kind selects the asymmetric prefix ("query",
// "document" or "").
func (o *OpenAI) Embed(ctx context.Context, texts []string, kind string) ([][]float32, error) {
	if err := checkKind(kind); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.opts.Timeout)
	defer cancel()
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.opts.BatchSize {
		batch := texts[start:min(start+o.opts.BatchSize, len(texts))]
		vecs, err := o.embedBatch(ctx, o.prefixed(batch, kind), kind)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func checkKind(kind string) error {
	switch kind {
	case "", KindQuery, KindDocument:
		return nil
	}
	return rcp.InvalidParams("kind", "kind must be %q or %q", KindQuery, KindDocument)
}

// prefixed returns texts with the prefix for kind, copying only if needed.
func (o *OpenAI) prefixed(texts []string, kind string) []string {
	p := o.prefix(kind)
	if p == "" {
		return texts
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = p + t
	}
	return out
}

func (o *OpenAI) prefix(kind string) string {
	switch kind {
	case KindQuery:
		return o.opts.QueryPrefix
	case KindDocument:
		return o.opts.DocumentPrefix
	}
	return ""
}
