package beir

import (
	"fmt"
	"io"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// WriteSpeed prints the rows and, per concurrency, each sidecar path's
// added p50 and throughput relative to direct, and this process's CPU
// time per query.
func WriteSpeed(w io.Writer, mode rcp.Mode, rows []SpeedRow) {
	fmt.Fprintf(w, "mode %s\n%-15s %5s %6s %10s %10s %9s %12s %8s %10s\n", mode, "path", "conc", "reqs", "p50", "p95", "qps", "added p50", "qps %", "cpu/query")
	direct := map[int]SpeedRow{}
	for _, r := range rows {
		if r.Path == PathDirect {
			direct[r.Concurrency] = r
		}
	}
	for _, r := range rows {
		d := direct[r.Concurrency]
		fmt.Fprintf(w, "%-15s %5d %6d %10s %10s %9.1f %12s %7.1f%% %10s\n", r.Path, r.Concurrency, r.Requests,
			r.P50.Round(time.Microsecond), r.P95.Round(time.Microsecond), r.QPS,
			(r.P50 - d.P50).Round(time.Microsecond), 100*r.QPS/d.QPS, r.CPU.Round(time.Microsecond))
	}
}
