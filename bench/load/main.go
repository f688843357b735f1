// Command load drives retrieve requests against an RCP HTTP server and
// compares it, in the same run, with a bare net/http handler serving the
// same response bytes (or with a --baseline RCP server): req/s, p50 and
// p99, and with --pid the target's RSS and CPU time per request. With
// --rate it runs open loop and counts admitted against shed requests.
//
// It is a measuring tool for the project, not part of the shipped
// rcp-sidecar binary (a load generator has no place in a production
// image, and bench/hop is built the same way):
//
//	go run ./bench/load --url http://127.0.0.1:8080/rcp -c 32 -d 10s --pid $(pgrep -n rcp-sidecar)
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newBenchCmd().ExecuteContext(ctx); err != nil {
		os.Exit(1)
	}
}

func newBenchCmd() *cobra.Command {
	f := &benchFlags{}
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Load-test an RCP HTTP server and compare it with a bare net/http handler",
		Long: "load drives retrieve requests over a query list against --url with --connections\n" +
			"concurrent connections for --duration, then, in the same run, serves the same response\n" +
			"bytes from a bare net/http handler and measures that too. It reports req/s, p50 and p99\n" +
			"for both and the throughput ratio; with --pid it samples the target's RSS and CPU time.\n" +
			"CPU per request is reported for the load tool itself (which hosts the bare handler).",
		Example: "  go run ./bench/load --url http://127.0.0.1:8080/rcp -c 32 -d 10s --pid $(pgrep -n rcp-sidecar)",
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
	c := &target{base: strings.TrimSuffix(f.url, "/")}
	if err := c.initialize(ctx, hc); err != nil {
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
func fetchSample(ctx context.Context, hc *http.Client, c *target, body []byte) ([]byte, error) {
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

// target is the RCP server under test: its base URL and, for a stateful
// server, the session token its initialize returned (§13).
type target struct {
	base, session string
}

// initialize runs the §13 handshake and keeps _meta.session when present.
func (c *target) initialize(ctx context.Context, hc *http.Client) error {
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%d,"client":{"name":"bench-load","version":"0"}}}`, rcp.ProtocolVersion)
	resp, err := post(ctx, hc, c.base+"/initialize", "", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	var res struct {
		Result *struct {
			Meta struct {
				Session string `json:"session"`
			} `json:"_meta"`
		} `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &res) != nil || res.Result == nil {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(string(data), 200))
	}
	c.session = res.Result.Meta.Session
	return nil
}

// snippet is s with runs of white space folded, cut to n runes.
func snippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
