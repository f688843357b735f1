package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

type benchFlags struct {
	url     string
	conns   int
	dur     time.Duration
	warmup  time.Duration
	queries string
	k       int
	mode    string
	pid     int
	rounds  int
	// header, baseline and rate: see bench_access.go.
	header   []string
	baseline string
	rate     float64
}

// defaultBenchQueries cover the demo corpus's topics.
var defaultBenchQueries = []string{
	"how does an inverted index speed up keyword search", "why do comets grow two tails",
	"keeping bread dough rising with wild yeast", "water supply in ancient Rome",
	"how do antibodies recognise invaders", "message passing between concurrent functions",
	"what makes a volcano's slopes gentle", "why some key changes sound smooth",
	"storing surplus wind power", "riding behind another cyclist",
	"approximate nearest neighbour graphs", "snapshot isolation for readers",
	"finding longitude at sea", "how arches carry weight", "why prices rise when demand grows",
	"children over-applying grammar rules",
}

func newBenchCmd() *cobra.Command {
	f := &benchFlags{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Load-test an RCP HTTP server and compare it with a bare net/http handler",
		Long: "bench drives retrieve requests over a query list against --url with --connections\n" +
			"concurrent connections for --duration, then, in the same run, serves the same response\n" +
			"bytes from a bare net/http handler and measures that too. It reports req/s, p50 and p99\n" +
			"for both and the throughput ratio; with --pid it samples the target's RSS and CPU time.\n" +
			"CPU per request is reported for the load tool itself (which hosts the bare handler).",
		Example: "  rcp-sidecar bench --url http://127.0.0.1:8080/rcp -c 32 -d 10s --pid $(pgrep -n rcp-sidecar)",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runBench(cmd.Context(), cmd.OutOrStdout(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", "http://127.0.0.1:8080/rcp", "RCP base URL")
	fl.IntVarP(&f.conns, "connections", "c", 32, "concurrent connections")
	fl.DurationVarP(&f.dur, "duration", "d", 10*time.Second, "measured duration per target")
	fl.DurationVar(&f.warmup, "warmup", time.Second, "unmeasured warm-up per target")
	fl.StringVar(&f.queries, "queries", "", "file with one query per line (default: built-in list)")
	fl.IntVar(&f.k, "k", 10, "retrieve k")
	fl.StringVar(&f.mode, "mode", "", "retrieve mode (default: the server's)")
	fl.IntVar(&f.pid, "pid", 0, "sample this process's RSS and CPU time from /proc/<pid> during the target run")
	fl.IntVar(&f.rounds, "rounds", 3, "alternate target and bare runs this many times (duration split evenly), to share out noise from other load")
	fl.StringArrayVar(&f.header, "header", nil, `add "Name: value" to every request to --url (repeatable), e.g. "Authorization: Bearer $KEY"`)
	fl.StringVar(&f.baseline, "baseline", "", "compare against this RCP base URL (e.g. the same engine without access control) instead of the bare handler")
	fl.Float64Var(&f.rate, "rate", 0, "open loop: send this many req/s for --duration and count admitted vs shed (-32011/429) instead of comparing")
	return cmd
}

func runBench(ctx context.Context, w io.Writer, f *benchFlags) error {
	if f.conns < 1 || f.dur <= 0 || f.rounds < 1 {
		return errors.New("bench: --connections, --duration and --rounds must be positive")
	}
	queries, err := loadQueries(f.queries)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: f.conns, MaxConnsPerHost: f.conns, DisableCompression: true}}
	if err := addHeaders(hc, f); err != nil {
		return err
	}
	c := newRPCClient(f.url, hc)
	if err := c.initialize(ctx); err != nil {
		return fmt.Errorf("bench: initialize %s: %w", f.url, err)
	}
	reqs := retrieveBodies(queries, f.k, f.mode)
	if f.rate > 0 {
		printPaced(w, f.rate, runPaced(ctx, hc, c.base+"/retrieve", c.session, reqs, f.rate, f.conns, f.dur))
		return nil
	}
	sample, err := fetchSample(ctx, hc, c, reqs[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "target %s/retrieve  connections=%d duration=%s rounds=%d queries=%d response=%dB\n", c.base, f.conns, f.dur, f.rounds, len(queries), len(sample))
	bareURL, stopBare, err := comparison(f, sample)
	if err != nil {
		return err
	}
	defer stopBare()
	var target, bare loadResult
	rss := startRSS(f.pid)
	round := *f
	round.dur = f.dur / time.Duration(f.rounds)
	for i := range f.rounds {
		if i > 0 {
			round.warmup = 0
		}
		target = target.merge(measure(ctx, hc, c.base+"/retrieve", c.session, reqs, &round, f.pid))
		bare = bare.merge(measure(ctx, hc, bareURL, "", reqs, &round, 0))
	}
	printBench(w, target, bare, rss.stop(), f.baseline != "")
	return nil
}

func loadQueries(path string) ([]string, error) {
	if path == "" {
		return defaultBenchQueries, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if q := strings.TrimSpace(sc.Text()); q != "" {
			qs = append(qs, q)
		}
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("bench: %s has no queries", path)
	}
	return qs, nil
}

// fetchSample returns the target's exact response bytes for one request;
// the bare handler replays them.
func fetchSample(ctx context.Context, hc *http.Client, c *rpcClient, body []byte) ([]byte, error) {
	resp, err := post(ctx, hc, c.base+"/retrieve", c.session, body)
	if err != nil {
		return nil, fmt.Errorf("bench: sample request: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if !okResponse(resp.StatusCode, data) {
		return nil, fmt.Errorf("bench: sample request failed: HTTP %d: %s", resp.StatusCode, snippet(string(data), 200))
	}
	return data, nil
}

// startBare serves sample from a plain handler on a loopback port: the
// ceiling for an HTTP server returning the same bytes.
func startBare(sample []byte) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(sample)
	})
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/rcp/retrieve", func() { hs.Close() }, nil
}
