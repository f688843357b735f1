package beir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

// Path is one way of running a query in the speed comparison.
type Path string

// Paths compared by Speed.
const (
	PathDirect Path = "direct"         // plain HTTP to the engine
	PathEngine Path = "sidecar-engine" // in-process Engine.Retrieve
	PathHTTP   Path = "sidecar-http"   // JSON-RPC over the RCP HTTP handler on loopback
)

// SpeedRow is one measured (path, concurrency) cell.
type SpeedRow struct {
	Path        Path
	Concurrency int
	Requests    int
	P50, P95    time.Duration
	QPS         float64
	// CPU is this process's CPU time per query: the client alone on the
	// direct path, client and sidecar on the others (the engine runs
	// elsewhere), so the difference is what the sidecar costs.
	CPU time.Duration
}

// runner executes one query on a path.
type runner func(ctx context.Context, q string) error

// Speed measures every path at each concurrency over rounds passes of the
// queries, after one warm-up pass per path. Within a concurrency level the
// paths alternate pass by pass (the order rotating each round), so drift
// on a shared machine affects them alike; a row pools its path's passes.
func (s *Setup) Speed(ctx context.Context, mode rcp.Mode, conc []int, rounds int) ([]SpeedRow, error) {
	httpRun, stop, err := s.httpRunner(mode)
	if err != nil {
		return nil, err
	}
	defer stop()
	runners := map[Path]runner{PathDirect: s.directRunner(mode), PathEngine: s.engineRunner(mode), PathHTTP: httpRun}
	order := []Path{PathDirect, PathEngine, PathHTTP}
	for _, p := range order {
		if _, _, err := s.pass(ctx, runners[p], 4); err != nil {
			return nil, fmt.Errorf("warm-up %s: %w", p, err)
		}
	}
	var rows []SpeedRow
	for _, c := range conc {
		lat, wall, cpu := map[Path][]time.Duration{}, map[Path]time.Duration{}, map[Path]time.Duration{}
		for r := range max(rounds, 1) {
			for i := range order {
				p := order[(i+r)%len(order)]
				cpu0 := processCPU()
				l, w, err := s.pass(ctx, runners[p], c)
				if err != nil {
					return nil, fmt.Errorf("%s at %d: %w", p, c, err)
				}
				lat[p], wall[p], cpu[p] = append(lat[p], l...), wall[p]+w, cpu[p]+processCPU()-cpu0
			}
		}
		for _, p := range order {
			row := summarize(p, c, lat[p], wall[p])
			row.CPU = cpu[p] / time.Duration(row.Requests)
			rows = append(rows, row)
		}
	}
	return rows, nil
}

func summarize(p Path, c int, lat []time.Duration, wall time.Duration) SpeedRow {
	slices.Sort(lat)
	n := len(lat)
	return SpeedRow{Path: p, Concurrency: c, Requests: n, P50: lat[n/2], P95: lat[n*95/100],
		QPS: float64(n) / wall.Seconds()}
}

// pass runs every query once with c workers and returns the latencies
// and the wall time.
func (s *Setup) pass(ctx context.Context, run runner, c int) ([]time.Duration, time.Duration, error) {
	qs := s.ds.Queries
	lat := make([]time.Duration, len(qs))
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(qs) {
					return
				}
				t0 := time.Now()
				if err := run(ctx, qs[i].Text); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(start), firstErr
}

func (s *Setup) directRunner(mode rcp.Mode) runner {
	return func(ctx context.Context, q string) error {
		if ds, ok := s.kit.(directSearcher); ok {
			_, err := ds.directIDs(ctx, s, q, mode)
			return err
		}
		body, err := s.directBody(ctx, q, mode)
		if err != nil {
			return err
		}
		_, err = s.direct.searchIDs(ctx, s.opts.Index, body)
		return err
	}
}

func (s *Setup) engineRunner(mode rcp.Mode) runner {
	return func(ctx context.Context, q string) error {
		_, err := s.eng.Retrieve(ctx, s.params(q, mode))
		return err
	}
}

// httpRunner serves the Engine with the RCP HTTP handler on a loopback
// port and posts JSON-RPC retrieve calls to it.
func (s *Setup) httpRunner(mode rcp.Mode) (runner, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: server.New(s.eng, server.Options{}).Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	url := "http://" + ln.Addr().String() + server.DefaultBasePath + "/" + rcp.MethodRetrieve
	client := newDirect("", false).client
	var id atomic.Int64
	run := func(ctx context.Context, q string) error {
		frame, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id.Add(1), "method": rcp.MethodRetrieve, "params": s.params(q, mode)})
		return postRPC(ctx, client, url, frame)
	}
	return run, func() { _ = srv.Close() }, nil
}

func postRPC(ctx context.Context, c *http.Client, url string, frame []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(frame))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	// Read the ids only, as the direct client does with the engine's reply.
	var out struct {
		Result *struct {
			Hits []struct {
				ID string `json:"id"`
			} `json:"hits"`
		} `json:"result"`
		Error *rcp.Error `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return err
	}
	if out.Error != nil || out.Result == nil {
		return errors.New("rpc error: " + fmt.Sprint(out.Error))
	}
	return nil
}
