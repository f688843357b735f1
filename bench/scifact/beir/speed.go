package beir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
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
}

// runner executes one query on a path.
type runner func(ctx context.Context, q string) error

// Speed measures every path at each concurrency over rounds passes of the
// queries, after one warm-up pass per path. Paths alternate per
// concurrency level so drift affects them alike.
func (s *Setup) Speed(ctx context.Context, mode rcp.Mode, conc []int, rounds int) ([]SpeedRow, error) {
	httpRun, stop, err := s.httpRunner(mode)
	if err != nil {
		return nil, err
	}
	defer stop()
	runners := map[Path]runner{PathDirect: s.directRunner(mode), PathEngine: s.engineRunner(mode), PathHTTP: httpRun}
	order := []Path{PathDirect, PathEngine, PathHTTP}
	for _, p := range order {
		if _, err := s.measure(ctx, runners[p], 4, 1); err != nil {
			return nil, fmt.Errorf("warm-up %s: %w", p, err)
		}
	}
	var rows []SpeedRow
	for _, c := range conc {
		for _, p := range order {
			row, err := s.measure(ctx, runners[p], c, rounds)
			if err != nil {
				return nil, fmt.Errorf("%s at %d: %w", p, c, err)
			}
			row.Path = p
			rows = append(rows, *row)
		}
	}
	return rows, nil
}

// measure runs rounds × queries requests with c workers.
func (s *Setup) measure(ctx context.Context, run runner, c, rounds int) (*SpeedRow, error) {
	qs := s.ds.Queries
	total := rounds * len(qs)
	lat := make([]time.Duration, total)
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
				if i >= total {
					return
				}
				t0 := time.Now()
				if err := run(ctx, qs[i%len(qs)].Text); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if firstErr != nil {
		return nil, firstErr
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return &SpeedRow{Concurrency: c, Requests: total, P50: lat[total/2], P95: lat[total*95/100],
		QPS: float64(total) / wall.Seconds()}, nil
}

func (s *Setup) directRunner(mode rcp.Mode) runner {
	return func(ctx context.Context, q string) error {
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
	client := newDirect("").client
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
