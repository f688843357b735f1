// Command scifact checks that the sidecar returns exactly what the engine
// returns for the same query (fidelity) and measures what it adds
// (speed), on the BEIR SciFact test set read in place.
//
//	go run ./bench/scifact -engine elasticsearch -url $RCP_ES_URL
//	go run ./bench/scifact -engine elasticsearch -url $RCP_ES_URL -bench
//	go run ./bench/scifact -engine qdrant -url $RCP_QDRANT_ADDR
//
// For Qdrant the address is a gRPC host:port: a Qdrant server or the
// Qdrant Edge front of integration/qdrant (Qdrant's engine), whose direct
// path is the official Go client.
//
// With -embed-url (default $RCP_EMBED_URL) the index also holds document
// vectors and dense and hybrid are evaluated too.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
	"github.com/rcp-sidecar/rcp-sidecar/embedding"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

type flags struct {
	opts       beir.Options
	embedURL   string
	embedModel string
	embedDim   int
	inputType  bool
	bench      bool
	conc       string
	rounds     int
	modes      string
	fusion     string
	cpuprofile string
}

func parseFlags() *flags {
	f := &flags{}
	flag.StringVar(&f.opts.Engine, "engine", "elasticsearch", "engine kit")
	flag.StringVar(&f.opts.URL, "url", os.Getenv("RCP_ES_URL"), "engine base URL (default per engine: $RCP_ES_URL, $RCP_OS_URL, $RCP_QDRANT_ADDR; qdrant with none: the in-process FAKE)")
	flag.StringVar(&f.opts.Index, "index", "", "index name (default scifact, or scifact-<dim>d with vectors)")
	flag.StringVar(&f.opts.DataDir, "data", "", "SciFact directory (corpus.jsonl(.gz), queries.jsonl, qrels/test.tsv); default: $RCP_SCIFACT_DIR, ../shared/datasets/scifact beside the repository, the verified cache, or a download into it")
	flag.BoolVar(&f.opts.Reindex, "reindex", false, "rebuild the index")
	flag.IntVar(&f.opts.K, "k", 100, "hits compared per query")
	flag.IntVar(&f.opts.Queries, "n", 0, "use only the first n test queries (0: all)")
	flag.IntVar(&f.opts.MaxDocs, "max-docs", 0, "index only the first N documents plus those judged for the queries (a pool; nDCG not comparable)")
	flag.StringVar(&f.embedURL, "embed-url", os.Getenv("RCP_EMBED_URL"), "OpenAI-compatible embedding server (empty: sparse only)")
	flag.StringVar(&f.embedModel, "embed-model", os.Getenv("RCP_EMBED_MODEL"), "embedding model")
	flag.IntVar(&f.embedDim, "embed-dim", atoi(os.Getenv("RCP_EMBED_DIM")), "embedding dimension")
	flag.BoolVar(&f.inputType, "embed-input-type", os.Getenv("RCP_EMBED_INPUT_TYPE") == "1", "server applies query/passage prefixes from input_type")
	flag.BoolVar(&f.bench, "bench", false, "measure speed instead of fidelity")
	flag.StringVar(&f.conc, "concurrency", "1,8,32", "speed: concurrency levels")
	flag.IntVar(&f.rounds, "rounds", 1, "speed: passes over the queries per cell")
	flag.StringVar(&f.modes, "modes", "", "modes to run (default sparse, plus dense,hybrid with an embedder)")
	flag.BoolVar(&f.opts.DirectGzip, "direct-gzip", false, "direct client accepts gzipped responses (match an adapter whose client does)")
	flag.StringVar(&f.fusion, "fusion", "", "hybrid fusion method sent to the sidecar: rrf, weighted or convex (default: the server's)")
	flag.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	f.defaultURL()
	return f
}

// urlEnv is the engine URL's environment variable per -engine; an empty
// Qdrant address starts the in-process FAKE.
var urlEnv = map[string]string{"opensearch": "RCP_OS_URL", beir.QdrantName: "RCP_QDRANT_ADDR"}

// defaultURL takes -url from the engine's own variable when -url is not
// given for an engine other than Elasticsearch.
func (f *flags) defaultURL() {
	set := false
	flag.Visit(func(fl *flag.Flag) { set = set || fl.Name == "url" })
	if env, ok := urlEnv[f.opts.Engine]; ok && !set {
		f.opts.URL = os.Getenv(env)
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func main() {
	f := parseFlags()
	if f.cpuprofile != "" {
		pf, err := os.Create(f.cpuprofile)
		if err == nil && pprof.StartCPUProfile(pf) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	if err := run(context.Background(), f, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scifact:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(ctx context.Context, f *flags, out io.Writer) error {
	if f.opts.URL == "" && f.opts.Engine != beir.QdrantName {
		return fmt.Errorf("-url (or RCP_ES_URL) is required")
	}
	if f.opts.DataDir == "" {
		loc, err := beir.Locate(ctx)
		if err != nil {
			return err
		}
		f.opts.DataDir = loc.Dir
		fmt.Fprintln(os.Stderr, "dataset:", loc.From)
	}
	emb, err := f.embedder()
	if err != nil {
		return err
	}
	if emb != nil && f.bench {
		emb = beir.MemoQueries(emb) // time the engines, not the embedding server
	}
	f.opts.Embedder, f.opts.Log, f.opts.Fusion = emb, os.Stderr, rcp.FusionMethod(f.fusion)
	f.opts.EmbedVariant = "prefix"
	if f.inputType {
		f.opts.EmbedVariant = "input_type"
	}
	if f.opts.Index == "" {
		f.opts.Index = "scifact"
		if emb != nil {
			f.opts.Index = fmt.Sprintf("scifact-%dd", emb.Dimension())
		}
		if f.opts.MaxDocs > 0 {
			f.opts.Index += fmt.Sprintf("-pool%d-q%d", f.opts.MaxDocs, f.opts.Queries)
		}
	}
	s, err := beir.Prepare(ctx, f.opts)
	if err != nil {
		return err
	}
	defer s.Close()
	if l := s.Label(); l != "" {
		fmt.Fprintln(out, "engine:", l)
	}
	ev := s.Engine().Evidence()
	fmt.Fprintf(out, "evidence: nativeRRF=%t deterministic=%t\n", ev.NativeRRF, ev.Deterministic)
	for _, m := range f.modeList(emb != nil) {
		if f.bench {
			err = speed(ctx, s, m, f, out)
		} else {
			err = fidelity(ctx, s, m, f.fusion, out)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *flags) embedder() (adapters.Embedder, error) {
	if f.embedURL == "" {
		return nil, nil
	}
	o := embedding.OpenAIOptions{BaseURL: f.embedURL, Model: f.embedModel, Dimension: f.embedDim,
		SendInputType: f.inputType, Timeout: 5 * time.Minute}
	if !f.inputType {
		o.QueryPrefix, o.DocumentPrefix = "query: ", "passage: "
	}
	return embedding.NewOpenAI(o)
}

func (f *flags) modeList(dense bool) []rcp.Mode {
	if f.modes != "" {
		var ms []rcp.Mode
		for _, m := range strings.Split(f.modes, ",") {
			ms = append(ms, rcp.Mode(strings.TrimSpace(m)))
		}
		return ms
	}
	if dense {
		return []rcp.Mode{rcp.ModeSparse, rcp.ModeDense, rcp.ModeHybrid}
	}
	return []rcp.Mode{rcp.ModeSparse}
}

func fidelity(ctx context.Context, s *beir.Setup, m rcp.Mode, fusion string, out io.Writer) error {
	r, err := s.Fidelity(ctx, m)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%-6s queries=%d nDCG@10 sidecar=%.4f", m, r.Queries, r.NDCGSidecar)
	if m == rcp.ModeHybrid && fusion != "" {
		fmt.Fprintf(out, " fusion=%s", fusion)
	}
	if r.HasDirect {
		fmt.Fprintf(out, " direct=%.4f identical=%d/%d", r.NDCGDirect, r.Identical, r.Queries)
	}
	fmt.Fprintln(out)
	for _, d := range r.Diffs {
		fmt.Fprintln(out, "  ", d)
	}
	if r.HasDirect && r.Identical != r.Queries {
		return fmt.Errorf("%s: %d of %d queries differ", m, r.Queries-r.Identical, r.Queries)
	}
	return nil
}

func speed(ctx context.Context, s *beir.Setup, m rcp.Mode, f *flags, out io.Writer) error {
	var conc []int
	for _, c := range strings.Split(f.conc, ",") {
		if n := atoi(strings.TrimSpace(c)); n > 0 {
			conc = append(conc, n)
		}
	}
	rows, err := s.Speed(ctx, m, conc, f.rounds)
	if err != nil {
		return err
	}
	beir.WriteSpeed(out, m, rows)
	return nil
}
