package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
)

// Paths measured per cell, in the order of the first round.
const (
	pathDirect  = "direct"
	pathProxy   = "proxy"
	pathSidecar = "sidecar"
	pathEmbed   = "embed"
	// pathProxyEmbed is the bare proxy that makes one embedding call
	// before forwarding (withEmbedCall): the least a hop serving a dense
	// query given as text does. Dense cells of the HTTP engines only.
	pathProxyEmbed = "proxy+embed"
)

// cell is one (mode, k) of one engine: the requests per path.
type cell struct {
	mode string
	k    int
	// native sends a query's native request on the direct or proxy path;
	// rcpBodies are the sidecar's retrieve requests.
	native    nativeCall
	rcpBodies [][]byte
	// proxyEmbed: the cell runs the proxy+embed path too.
	proxyEmbed bool
}

// natives are the cell's paths that take the engine's own requests.
func (c cell) natives() []string {
	if c.proxyEmbed {
		return []string{pathDirect, pathProxy, pathProxyEmbed}
	}
	return []string{pathDirect, pathProxy}
}

// procs are the processes whose CPU is read around each run.
type procs struct {
	proxy, proxyEmbed, sidecar, engine int
}

// isQdrant tells the gRPC engine from the HTTP/JSON ones.
func isQdrant(eng string) bool { return eng == beir.QdrantName }

func measureEngine(ctx context.Context, f *flags, eng, engURL string, modes []string, ks []int, emb adapters.Embedder, out io.Writer) ([]string, error) {
	kit, err := beir.KitFor(eng)
	if err != nil {
		return nil, err
	}
	opts := beir.Options{Engine: eng, URL: engURL, DataDir: f.data, K: 100, Queries: f.queries, Log: os.Stderr, Index: "scifact", EmbedVariant: "prefix"}
	if f.inputType {
		opts.EmbedVariant = "input_type"
	}
	var memo adapters.Embedder
	if emb != nil {
		memo = beir.MemoQueries(emb)
		opts.Embedder, opts.Index = memo, fmt.Sprintf("scifact-%dd", emb.Dimension())
	}
	if f.maxDocs > 0 { // the index naming of bench/scifact, so the two tools share indices
		opts.MaxDocs = f.maxDocs
		opts.Index += fmt.Sprintf("-pool%d-q%d", f.maxDocs, f.queries)
	}
	if isQdrant(eng) {
		// The Qdrant kit recreates its collection on every run; a name of
		// its own keeps it apart from bench/scifact's, and it is dropped
		// at the end.
		opts.Index = "hop-" + opts.Index
		defer func() {
			if err := dropQdrant(context.WithoutCancel(ctx), engURL, opts.Index); err != nil {
				fmt.Fprintf(os.Stderr, "qdrant: drop collection %s: %v\n", opts.Index, err)
			}
		}()
	}
	setup, err := beir.Prepare(ctx, opts) // the one index loader: reuses the index when it holds the corpus
	if err != nil {
		return nil, err
	}
	defer setup.Close()
	queries := setup.Queries()
	if !isQdrant(eng) {
		// One segment per shard: approximate kNN over several segments can
		// change between two identical requests while background merges run,
		// which would fail the identity check for reasons not on the path.
		if _, status, err := post(ctx, http.DefaultClient, engURL+"/"+opts.Index+"/_forcemerge?max_num_segments=1", nil, nil); err != nil || status != http.StatusOK {
			return nil, fmt.Errorf("force merge %s: HTTP %d %v", opts.Index, status, err)
		}
		// The merged segment is searched only after a refresh; without one
		// the periodic refresh swaps it in between the paths' checks, and
		// hits with equal scores can change order (Lucene breaks ties by
		// document number, which the merge renumbers).
		if _, status, err := post(ctx, http.DefaultClient, engURL+"/"+opts.Index+"/_refresh", nil, nil); err != nil || status != http.StatusOK {
			return nil, fmt.Errorf("refresh %s: HTTP %d %v", opts.Index, status, err)
		}
	}

	var vecs [][]float32
	if slices.Contains(modes, "dense") {
		for _, q := range queries {
			v, err := memo.Embed(ctx, []string{q.Text}, "query")
			if err != nil {
				return nil, fmt.Errorf("embed query %s: %w", q.ID, err)
			}
			vecs = append(vecs, v[0])
		}
	}
	embedURL := f.embedURL
	if vecs != nil {
		texts := make([]string, len(queries))
		for i, q := range queries {
			texts[i] = q.Text
		}
		u, stop, err := startReplay(texts, vecs)
		if err != nil {
			return nil, err
		}
		defer stop()
		embedURL = u
	}
	// The engine's own address as a URL: Qdrant's is a gRPC host:port,
	// which the proxy reaches over h2c.
	engHTTP := engURL
	if isQdrant(eng) {
		engHTTP = "http://" + engURL
	}
	proxy, err := startProxy(engHTTP, isQdrant(eng), "")
	if err != nil {
		return nil, err
	}
	defer proxy.stop()
	var proxyEmbed *child
	if vecs != nil && !isQdrant(eng) {
		call, err := embedCall(embedURL, f, queries[0].Text)
		if err != nil {
			return nil, err
		}
		if proxyEmbed, err = startProxy(engHTTP, false, call); err != nil {
			return nil, err
		}
		defer proxyEmbed.stop()
	}
	logw := io.Discard
	if f.verbose {
		logw = os.Stderr
	}
	dims := 0
	if emb != nil {
		dims = emb.Dimension()
	}
	side, err := startSidecar(ctx, f.sidecar, sidecarConfig(eng, engURL, opts.Index, embedURL, f, dims, emb != nil), f.cpuProfile, logw)
	if err != nil {
		return nil, err
	}
	defer side.stop()
	pids := procs{proxy: proxy.pid(), sidecar: side.pid(), engine: listenerPID(engHTTP)}
	if proxyEmbed != nil {
		pids.proxyEmbed = proxyEmbed.pid()
	}
	if pids.engine == 0 {
		fmt.Fprintf(os.Stderr, "%s: no process found listening on %s; engine CPU not reported\n", eng, engURL)
	}

	hc := newClient(f.conns)
	var nat native
	if isQdrant(eng) {
		if nat, err = newQdrantNative(opts.Index, engURL, proxy.addr); err != nil {
			return nil, err
		}
	} else {
		urls := map[string]string{
			pathDirect: engURL + "/" + opts.Index + "/_search",
			pathProxy:  proxy.addr + "/" + opts.Index + "/_search",
		}
		if proxyEmbed != nil {
			urls[pathProxyEmbed] = proxyEmbed.addr + "/" + opts.Index + "/_search"
		}
		nat = &httpNative{eng: eng, kit: kit, hc: hc, dense: emb != nil, urls: urls}
	}
	defer nat.close()
	sidecarURL := side.addr + "/rcp/retrieve"
	var summary []string
	for _, mode := range modes {
		for _, k := range ks {
			c := cell{mode: mode, k: k, proxyEmbed: mode == "dense" && proxyEmbed != nil}
			if c.native, err = nat.requests(mode, k, queries, vecs); err != nil {
				return nil, err
			}
			for i, q := range queries {
				p := map[string]any{"query": q.Text, "mode": mode, "k": k, "candidateK": k}
				rb, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "retrieve", "params": p})
				if err != nil {
					return nil, err
				}
				c.rcpBodies = append(c.rcpBodies, rb)
			}
			same, err := checkSame(ctx, hc, sidecarURL, c, min(f.check, len(queries)))
			if err != nil {
				return nil, fmt.Errorf("%s k=%d: %w", mode, k, err)
			}
			rows, rounds, err := measureCell(ctx, f, hc, sidecarURL, c, pids, emb, queries)
			if err != nil {
				return nil, err
			}
			for _, p := range []string{pathDirect, pathProxy, pathProxyEmbed, pathSidecar, pathEmbed} {
				r, ok := rows[p]
				if !ok {
					continue
				}
				hop := "–"
				switch p {
				case pathProxy:
					hop = perRequest(r.cpu["proxy"], r.n).String()
				case pathProxyEmbed:
					hop = perRequest(r.cpu[pathProxyEmbed], r.n).String()
				case pathSidecar:
					hop = perRequest(r.cpu["sidecar"], r.n).String()
				}
				engCPU := "–"
				if pids.engine > 0 && p != pathEmbed {
					engCPU = perRequest(r.cpu["engine"], r.n).String()
				}
				fmt.Fprintf(out, "| %s | %s | %d | %s | %.0f | %s | %s | %s | %s | %s | %d |\n", eng, mode, k, p, r.rps(),
					percentile(r.lat, 50).Round(10*time.Microsecond), percentile(r.lat, 99).Round(10*time.Microsecond),
					hop, engCPU, perRequest(r.cpu["client"], r.n), r.errs)
			}
			d, px, sc := rows[pathDirect], rows[pathProxy], rows[pathSidecar]
			ratio, _ := cpuRatio(px, "proxy", sc)
			spread := ""
			if rs := roundRatios(rounds, pathProxy); len(rs) > 1 {
				spread = fmt.Sprintf(" (by round: median %.2fx, %.2f–%.2fx)", median(rs), rs[0], rs[len(rs)-1])
			}
			line := fmt.Sprintf("%s %s k=%d: identical %d/%d; sidecar/proxy CPU per request %.1fx%s; throughput vs direct: sidecar %.0f%%, proxy %.0f%%",
				eng, mode, k, same, min(f.check, len(queries)), ratio, spread, 100*sc.rps()/d.rps(), 100*px.rps()/d.rps())
			if pe, ok := rows[pathProxyEmbed]; ok {
				r, _ := cpuRatio(pe, pathProxyEmbed, sc)
				line += fmt.Sprintf("; sidecar/(proxy+embed) CPU per request %.2fx", r)
				if rs := roundRatios(rounds, pathProxyEmbed); len(rs) > 1 {
					line += fmt.Sprintf(" (by round: median %.2fx, %.2f–%.2fx)", median(rs), rs[0], rs[len(rs)-1])
				}
			}
			summary = append(summary, line)
		}
	}
	return summary, nil
}

// cpuRatio is the sidecar's CPU per request on its path over that of
// the process role on base's path; false when either path served
// nothing or the base's CPU was not read.
func cpuRatio(base result, role string, sc result) (float64, bool) {
	pc := perRequest(base.cpu[role], base.n)
	if pc <= 0 || sc.n == 0 {
		return 0, false
	}
	return float64(perRequest(sc.cpu["sidecar"], sc.n)) / float64(pc), true
}

// roundRatios is cpuRatio over the base path (pathProxy or
// pathProxyEmbed, whose process has its name) of each round on its own,
// sorted. The paths of a round ran back to back, so the spread of these
// ratios is the run's own measure of how much the machine moved under it.
func roundRatios(rounds []map[string]result, base string) []float64 {
	var out []float64
	for _, r := range rounds {
		if v, ok := cpuRatio(r[base], base, r[pathSidecar]); ok {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// median is the middle of sorted values (the mean of the two middle ones
// for an even count); 0 for none.
func median(sorted []float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// measureCell warms each path up, then alternates them over f.rounds
// rounds (order rotating), reading every watched process's CPU around
// each run. It returns each path's rounds merged, and each round's runs.
func measureCell(ctx context.Context, f *flags, hc *http.Client, sidecarURL string, c cell, pids procs, emb adapters.Embedder, queries []beir.Query) (map[string]result, []map[string]result, error) {
	do := map[string]func(ctx context.Context, i int) error{}
	natives := c.natives()
	for _, p := range natives {
		do[p] = func(ctx context.Context, i int) error {
			_, err := c.native(ctx, p, i, false)
			return err
		}
	}
	do[pathSidecar] = func(ctx context.Context, i int) error {
		data, status, err := post(ctx, hc, sidecarURL, c.rcpBodies[i%len(c.rcpBodies)], nil)
		if err != nil {
			return err
		}
		if status != http.StatusOK || !bytes.Contains(data, []byte(`"result"`)) {
			return fmt.Errorf("HTTP %d", status)
		}
		return nil
	}
	order := append(natives, pathSidecar)
	if c.mode == "dense" && emb != nil {
		do[pathEmbed] = func(ctx context.Context, i int) error {
			_, err := emb.Embed(ctx, []string{queries[i%len(queries)].Text}, "query")
			return err
		}
		order = append(order, pathEmbed)
	}
	for _, p := range order {
		if r := run(ctx, f.conns, f.warmup, do[p]); r.n > 0 && r.errs == r.n {
			return nil, nil, fmt.Errorf("%s %s k=%d: every warm-up request failed", p, c.mode, c.k)
		}
	}
	rows := map[string]result{}
	rounds := make([]map[string]result, f.rounds)
	per := f.dur / time.Duration(f.rounds)
	self := os.Getpid()
	for round := range f.rounds {
		rounds[round] = map[string]result{}
		for i := range order {
			p := order[(i+round)%len(order)]
			before := readCPU(self, pids)
			r := run(ctx, f.conns, per, do[p])
			after := readCPU(self, pids)
			r.cpu = map[string]time.Duration{}
			for role, v := range after {
				r.cpu[role] = v - before[role]
			}
			rounds[round][p] = r
			rows[p] = rows[p].merge(r)
		}
	}
	return rows, rounds, nil
}

func readCPU(self int, pids procs) map[string]time.Duration {
	out := map[string]time.Duration{}
	for role, pid := range map[string]int{"client": self, "proxy": pids.proxy, pathProxyEmbed: pids.proxyEmbed, "sidecar": pids.sidecar, "engine": pids.engine} {
		if v, ok := pidCPU(pid); ok {
			out[role] = v
		}
	}
	return out
}

// checkSame runs the first n queries on every path and counts those whose
// hit ids agree in order across all three; a difference is an error.
func checkSame(ctx context.Context, hc *http.Client, sidecarURL string, c cell, n int) (int, error) {
	same := 0
	natives := c.natives()
	for i := range n {
		lists := make([][]string, len(natives)+1)
		for j, p := range natives {
			ids, err := c.native(ctx, p, i, true)
			if err != nil {
				return same, fmt.Errorf("check %s query %d: %w", p, i, err)
			}
			lists[j] = ids[:min(len(ids), c.k)]
		}
		data, status, err := post(ctx, hc, sidecarURL, c.rcpBodies[i], nil)
		if err != nil || status != http.StatusOK {
			return same, fmt.Errorf("check %s query %d: HTTP %d %v: %.200s", pathSidecar, i, status, err, data)
		}
		ids, err := hitIDs(data, true)
		if err != nil {
			return same, fmt.Errorf("check %s query %d: %w", pathSidecar, i, err)
		}
		lists[len(natives)] = ids[:min(len(ids), c.k)]
		for j, l := range lists[1:] {
			if len(lists[0]) == 0 || !slices.Equal(lists[0], l) {
				p := pathSidecar
				if j+1 < len(natives) {
					p = natives[j+1]
				}
				return same, fmt.Errorf("query %d: direct %v, %s %v", i, lists[0], p, l)
			}
		}
		same++
	}
	return same, nil
}

// hitIDs reads the hit ids, in order, of an engine search response or an
// RCP retrieve response.
func hitIDs(data []byte, rcp bool) ([]string, error) {
	var ids []string
	if rcp {
		var r struct {
			Result *struct {
				Hits []struct {
					ID string `json:"id"`
				} `json:"hits"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, err
		}
		if r.Result == nil {
			return nil, fmt.Errorf("no result: %.300s", r.Error)
		}
		for _, h := range r.Result.Hits {
			ids = append(ids, h.ID)
		}
		return ids, nil
	}
	var r struct {
		Hits struct {
			Hits []struct {
				ID string `json:"_id"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	for _, h := range r.Hits.Hits {
		ids = append(ids, h.ID)
	}
	return ids, nil
}
