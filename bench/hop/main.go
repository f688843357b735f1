// Command hop measures what the sidecar's hop costs. Against the same
// engine, index and SciFact test queries it drives three paths in one run
// — the engine directly, a bare net/http reverse proxy forwarding the same
// bytes (started here as a separate process; never part of the binary),
// and the sidecar (`rcp-sidecar serve`, a separate process) — and reports
// req/s, p50/p99 and the CPU per request of each process: the proxy and
// the sidecar from /proc/<pid>/stat, the engine from the process that
// listens on its port, the load client from its own. Before measuring it
// checks on a sample that every path returns the same ids in the same
// order.
//
// Usage:
//
//	go build -o rcp-sidecar ./cmd/rcp-sidecar
//	go run ./bench/hop -sidecar ./rcp-sidecar [-engines elasticsearch,opensearch,qdrant] [-modes sparse,dense] [-k 10,100] [-c 8] [-d 6s]
//
// Engine URLs come from $RCP_ES_URL and $RCP_OS_URL, Qdrant's gRPC
// host:port from $RCP_QDRANT_ADDR. Elasticsearch and OpenSearch are driven
// with their JSON _search over HTTP/1.1; Qdrant with gRPC QueryPoints (the
// official Go client, as the adapter uses it), and its proxy forwards
// HTTP/2 over cleartext. Qdrant's collection is recreated on every run
// (sparse: BM25 by qdrant/bm25 inference; dense: an unnamed cosine vector)
// and dropped at the end. Dense needs the
// embedding server ($RCP_EMBED_URL, $RCP_EMBED_MODEL, $RCP_EMBED_DIM). For
// dense every query is embedded once before the run: the direct and proxy
// paths send the kNN body the adapter sends with that vector, and the
// sidecar embeds each query itself through a test server started here that
// replays the same vectors (the embedding server's own answers), so its
// rows hold one loopback embedding call but not the model; an "embed" row
// measures the real embedding server alone at the same concurrency. For
// Elasticsearch and OpenSearch a "proxy+embed" row is a second bare proxy
// that makes the sidecar's embedding call to the replay server before it
// forwards each request (the least a hop serving a query given as text
// does), and the summary gives the sidecar's CPU over it as well.
//
// Each cell's summary gives the sidecar's CPU per request over the
// proxy's for the whole run and, with more than one round, for each
// round on its own (their median and range): the two paths of a round
// ran back to back, so the range is the run's own measure of how far the
// machine moved under it. Raise -rounds for a steadier median.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
	"github.com/rcp-sidecar/rcp-sidecar/embedding"
)

type flags struct {
	role, target       string
	h2c                bool
	embedCall          string // the proxy's embedding call: URL, a space, the JSON body
	sidecar            string
	engines, modes, ks string
	conns, rounds      int
	dur, warmup        time.Duration
	check, queries     int
	maxDocs            int
	data               string
	embedURL, model    string
	dim                int
	inputType          bool
	verbose            bool
	cpuProfile         string
}

func parseFlags() *flags {
	f := &flags{}
	flag.StringVar(&f.role, "role", "", "internal: \"proxy\" runs the bare reverse proxy to -target")
	flag.StringVar(&f.target, "target", "", "internal: the proxy's upstream URL")
	flag.BoolVar(&f.h2c, "h2c", false, "internal: the proxy speaks HTTP/2 over cleartext on both sides (gRPC)")
	flag.StringVar(&f.embedCall, "embed-call", "", "internal: before forwarding each request the proxy posts this body (after the URL and a space) and reads the answer")
	flag.StringVar(&f.sidecar, "sidecar", "", "path of the rcp-sidecar binary to measure (required)")
	flag.StringVar(&f.engines, "engines", "elasticsearch,opensearch", "engines to measure: elasticsearch, opensearch, qdrant ($RCP_ES_URL, $RCP_OS_URL, $RCP_QDRANT_ADDR)")
	flag.StringVar(&f.modes, "modes", "sparse,dense", "retrieval modes (dense needs $RCP_EMBED_URL)")
	flag.StringVar(&f.ks, "k", "10,100", "k values")
	flag.IntVar(&f.conns, "c", 8, "concurrent connections")
	flag.DurationVar(&f.dur, "d", 6*time.Second, "measured time per path and cell (split over -rounds)")
	flag.DurationVar(&f.warmup, "warmup", time.Second, "unmeasured warm-up per path and cell")
	flag.IntVar(&f.rounds, "rounds", 3, "alternate the paths this many times per cell, to share out noise from other load")
	flag.IntVar(&f.check, "check", 30, "queries whose ids and order are compared across the paths")
	flag.IntVar(&f.queries, "n", 0, "use the first n test queries (0: all)")
	flag.IntVar(&f.maxDocs, "max-docs", 0, "index only the first N documents plus those judged for the queries (keeps embedding the corpus short; 0: all)")
	flag.StringVar(&f.data, "data", "", "SciFact directory (default: the locator of bench/scifact, which falls back to a generated corpus)")
	flag.StringVar(&f.embedURL, "embed-url", os.Getenv("RCP_EMBED_URL"), "OpenAI-compatible embedding server")
	flag.StringVar(&f.model, "embed-model", os.Getenv("RCP_EMBED_MODEL"), "embedding model")
	flag.IntVar(&f.dim, "embed-dim", atoi(os.Getenv("RCP_EMBED_DIM")), "embedding dimension")
	flag.BoolVar(&f.inputType, "embed-input-type", os.Getenv("RCP_EMBED_INPUT_TYPE") == "1", "server applies query/passage prefixes from input_type")
	flag.BoolVar(&f.verbose, "v", false, "show the sidecar's log")
	flag.StringVar(&f.cpuProfile, "sidecar-cpuprofile", "", "have the sidecar write a CPU profile of the whole run to this file (serve --cpuprofile)")
	flag.Parse()
	return f
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func main() {
	f := parseFlags()
	if f.role == "proxy" {
		if err := serveProxy(f.target, f.h2c, f.embedCall); err != nil {
			fmt.Fprintln(os.Stderr, "hop proxy:", err)
			os.Exit(1)
		}
		return
	}
	if err := runAll(context.Background(), f, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "hop:", err)
		os.Exit(1)
	}
}

// engineURL is each engine's address variable (a URL; Qdrant's is its gRPC
// host:port).
var engineURL = map[string]string{"elasticsearch": "RCP_ES_URL", "opensearch": "RCP_OS_URL", beir.QdrantName: "RCP_QDRANT_ADDR"}

func runAll(ctx context.Context, f *flags, out io.Writer) error {
	if f.sidecar == "" {
		return fmt.Errorf("-sidecar (the rcp-sidecar binary) is required")
	}
	if f.conns < 1 || f.dur <= 0 || f.rounds < 1 {
		return fmt.Errorf("-c, -d and -rounds must be positive")
	}
	var ks []int
	for _, k := range splitList(f.ks) {
		n := atoi(k)
		if n < 1 || n > 100 {
			return fmt.Errorf("-k: %q is not in 1..100", k)
		}
		ks = append(ks, n)
	}
	modes := splitList(f.modes)
	dense := slices.Contains(modes, "dense")
	for _, m := range modes {
		if m != "sparse" && m != "dense" {
			return fmt.Errorf("-modes: %q is not sparse or dense", m)
		}
	}
	if f.data == "" {
		loc, err := beir.Locate(ctx)
		if err != nil {
			return err
		}
		f.data = loc.Dir
		fmt.Fprintln(os.Stderr, "dataset:", loc.From)
	}
	var emb adapters.Embedder
	if dense {
		if f.embedURL == "" {
			return fmt.Errorf("dense needs -embed-url ($RCP_EMBED_URL)")
		}
		o := embedding.OpenAIOptions{BaseURL: f.embedURL, Model: f.model, Dimension: f.dim, SendInputType: f.inputType, Timeout: 5 * time.Minute}
		if !f.inputType {
			o.QueryPrefix, o.DocumentPrefix = "query: ", "passage: "
		}
		var err error
		if emb, err = embedding.NewOpenAI(o); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "connections=%d measured=%s per path and cell in %d rounds, warm-up %s, CPU from /proc/<pid>/stat\n\n", f.conns, f.dur, f.rounds, f.warmup)
	fmt.Fprintln(out, "| engine | mode | k | path | req/s | p50 | p99 | hop CPU/req | engine CPU/req | client CPU/req | errors |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|---|---|")
	var summary []string
	for _, eng := range splitList(f.engines) {
		env, ok := engineURL[eng]
		if !ok {
			return fmt.Errorf("-engines: %q is not measured by this tool (elasticsearch, opensearch, qdrant)", eng)
		}
		u := os.Getenv(env)
		if u == "" {
			return fmt.Errorf("%s: $%s is not set", eng, env)
		}
		s, err := measureEngine(ctx, f, eng, u, modes, ks, emb, out)
		if err != nil {
			return fmt.Errorf("%s: %w", eng, err)
		}
		summary = append(summary, s...)
	}
	fmt.Fprintln(out)
	for _, s := range summary {
		fmt.Fprintln(out, s)
	}
	return nil
}

// hc is the load client: keep-alive, no compression (none of the paths
// asks the engine for gzip).
func newClient(conns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost, t.MaxConnsPerHost, t.DisableCompression = conns*2, conns*2, true
	return &http.Client{Transport: t, Timeout: 30 * time.Second}
}

// post sends body and returns the response body and status.
func post(ctx context.Context, hc *http.Client, u string, body []byte, buf *bytes.Buffer) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	if buf == nil {
		buf = &bytes.Buffer{}
	}
	buf.Reset()
	_, err = io.Copy(buf, io.LimitReader(res.Body, 64<<20))
	return buf.Bytes(), res.StatusCode, err
}

func sidecarConfig(eng, engURL, index, embedURL string, f *flags, dims int, dense bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "server:\n  http:\n    listen: 127.0.0.1:%s\n    base_path: /rcp\n  log_level: warn\n", portMark)
	if dense {
		q, d := "query: ", "passage: "
		if f.inputType {
			q, d = "", ""
		}
		fmt.Fprintf(&b, "embedder:\n  url: %q\n  model: %q\n  dimension: %d\n  query_prefix: %q\n  document_prefix: %q\n  send_input_type: %t\n  timeout: 30s\n",
			embedURL, f.model, dims, q, d, f.inputType)
	}
	fmt.Fprintf(&b, "backends:\n  - name: scifact\n    engine: %s\n    settings:\n", eng)
	if isQdrant(eng) {
		// The collection of bench/scifact/beir's Qdrant kit: text and title
		// in the payload, BM25 on the sparse vector, the unnamed dense one.
		fmt.Fprintf(&b, "      address: %q\n      collection: %q\n      text_field: text\n      title_field: title\n", engURL, index)
		fmt.Fprintf(&b, "      sparse_vector: %s\n      sparse_model: %s\n      timeout: %ds\n", qdrantSparseVector, qdrantBM25, qdrantTimeout)
	} else {
		fmt.Fprintf(&b, "      urls: [%q]\n      index: %q\n", engURL, index)
		fmt.Fprintf(&b, "      text_fields: [{name: title}, {name: text}]\n      tie_breaker: %g\n      content_field: text\n      title_field: title\n", beir.TieBreaker)
		if dense {
			b.WriteString("      vector_field: vec\n")
		}
		b.WriteString("      disable_compression: true\n")
	}
	b.WriteString("    policy:\n      max_k: 200\n      default_candidate_k: 100\n")
	return b.String()
}
