package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// Sizes of the paging runs.
const (
	pagedQueries = 20 // paginations in flight when the node is killed
	pageSize     = 5
	depth        = 40 // hits each pagination reads: 8 pages
	writeBatch   = 50 // documents per index/add
)

func TestElasticsearchCluster(t *testing.T) { runCluster(t, elasticsearch) }

func TestOpenSearchCluster(t *testing.T) { runCluster(t, opensearch) }

// indices are the test's indices on one cluster.
type indices struct {
	scifact string // SciFact, 3 primaries and 1 replica
	writes  string // index/add target, 3 primaries and 1 replica
	lone    string // 3 primaries, no replica, one primary per node
}

func runCluster(t *testing.T, e engine) {
	c := requireCluster(t, e)
	ds := sciFact(t)
	bin := itest.BuildSidecar(t, t.TempDir())
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	ix := indices{scifact: "rcp-cluster-scifact-" + hex.EncodeToString(suffix), writes: "rcp-cluster-writes-" + hex.EncodeToString(suffix),
		lone: "rcp-cluster-lone-" + hex.EncodeToString(suffix)}
	start := time.Now()
	c.createIndex(ix.scifact, 3, 1)
	c.load(ix.scifact, ds.Docs)
	c.createIndex(ix.writes, 3, 1)
	c.createIndexOnePerNode(ix.lone)
	c.load(ix.lone, ds.Docs[:600])
	t.Logf("%s: %d SciFact documents in %s (3 primaries, 1 replica), loaded in %s", e.name, len(ds.Docs), ix.scifact, time.Since(start).Round(time.Second))

	t.Run("SparseFidelity", func(t *testing.T) { c.with(t).sparseFidelity(bin, ix, ds) })
	t.Run("TimedOut", func(t *testing.T) { c.with(t).timedOut(bin, ix, ds) })
	t.Run("NodeKill", func(t *testing.T) { c.with(t).nodeKill(bin, ix, ds) })
}

// with is c reporting to t (a subtest).
func (c *cluster) with(t *testing.T) *cluster {
	cc := *c
	cc.t = t
	return &cc
}

// createIndexOnePerNode creates index with 3 primaries, no replica, at
// most one shard per node: each node holds exactly one primary.
func (c *cluster) createIndexOnePerNode(index string) {
	c.t.Helper()
	_, _, _ = do(http.MethodDelete, c.urls[0]+"/"+index+"?ignore_unavailable=true", nil)
	c.must(http.MethodPut, "/"+index, map[string]any{
		"settings": map[string]any{"number_of_shards": 3, "number_of_replicas": 0,
			"routing.allocation.total_shards_per_node": 1},
		"mappings": map[string]any{"properties": map[string]any{
			"title": map[string]any{"type": "text"}, "text": map[string]any{"type": "text"}}},
	})
	c.t.Cleanup(func() { _, _, _ = do(http.MethodDelete, c.urls[0]+"/"+index, nil) })
	c.health("green", index)
}

// sparseFidelity: 300 SciFact test queries through serve (urls: the three
// nodes) and as the engine's own multi_match give the same ids, in the
// same order, with the same scores.
func (c *cluster) sparseFidelity(bin string, ix indices, ds *beir.Dataset) {
	t := c.t
	s := c.startServe(bin, backend{urls: c.urls, index: ix.scifact})
	qs := ds.Queries[:min(fidelityQueries, len(ds.Queries))]
	const k = 10
	identical := 0
	var diffs []string
	for i, q := range qs {
		p, err := s.retrieve(q.Text, k, "")
		if err != nil {
			t.Fatalf("query %s through the sidecar: %s", q.ID, err)
		}
		want, derr := c.direct(c.urls[i%3], ix.scifact, q.Text, k)
		if derr != nil {
			t.Fatalf("query %s direct: %v", q.ID, derr)
		}
		if slices.Equal(p.Hits, want) {
			identical++
		} else if len(diffs) < 5 {
			diffs = append(diffs, fmt.Sprintf("query %s: sidecar %v, engine %v", q.ID, p.Hits, want))
		}
	}
	t.Logf("%s cluster, sparse fidelity: %d of %d queries identical (ids, order, scores; k=%d)", c.e.name, identical, len(qs), k)
	if identical != len(qs) {
		t.Errorf("%d of %d queries differ: %s", len(qs)-identical, len(qs), strings.Join(diffs, "; "))
	}
}

// timedOut: a search the engine answers with timed_out (a cluster-wide
// default search timeout of one nanosecond, checked during collection
// with low-level cancellation, which OpenSearch leaves off by default)
// reaches the client as -32014, retryable, as the adapters map it. A shard
// compares the engine's relative clock in whole milliseconds with its
// start, between blocks of work, so a search that ends within the
// millisecond it began is never timed out: the query is as many test
// queries at once as a query may hold, the engine is asked 10 times, the
// sidecar up to 200. The nodes read that clock uncached (start-cluster.sh);
// with the default 200 ms cache most searches end before it ticks.
func (c *cluster) timedOut(bin string, ix indices, ds *beir.Dataset) {
	t := c.t
	s := c.startServe(bin, backend{urls: c.urls, index: ix.scifact})
	// Test queries joined up to 300 words: a costlier search spans more
	// clock checks, and the query stays under the default max_query_chars
	// (8192) and under OpenSearch's limit of 1,024 clauses in a whole query
	// (indices.query.bool.max_clause_count): a multi_match over two fields
	// is two clauses per analysed term, and the analyser splits words
	// ("T-cell") into more terms than a space does (900 words of SciFact
	// queries make 1,024 clauses and fail every search).
	var words []string
	chars, terms := 0, 0
	for _, q := range ds.Queries {
		if chars+len(q.Text)+1 > 8000 || terms+len(strings.Fields(q.Text)) > 300 {
			break
		}
		words = append(words, q.Text)
		chars += len(q.Text) + 1
		terms += len(strings.Fields(q.Text))
	}
	query := strings.Join(words, " ")
	set := func(timeout, lowLevel any) {
		c.must(http.MethodPut, "/_cluster/settings", map[string]any{"transient": map[string]any{
			"search.default_search_timeout": timeout, "search.low_level_cancellation": lowLevel}})
	}
	set("1nanos", true)
	defer set(nil, nil)
	engineTimedOut := 0
	for range 10 {
		// timed_out with partial hits, or (OpenSearch, when every shard
		// timed out) a 500 whose root cause is time_exceeded_exception
		status, raw, err := do(http.MethodPost, c.urls[0]+"/"+ix.scifact+"/_search", map[string]any{
			"query": map[string]any{"multi_match": map[string]any{"query": query, "fields": []string{"title", "text"}}}})
		var r struct {
			TimedOut bool `json:"timed_out"`
		}
		if err == nil && ((status == 200 && json.Unmarshal(raw, &r) == nil && r.TimedOut) ||
			(status >= 500 && strings.Contains(string(raw), "time_exceeded_exception"))) {
			engineTimedOut++
		}
	}
	if engineTimedOut == 0 {
		t.Fatalf("the engine timed out none of 10 searches with search.default_search_timeout=1nanos: the test cannot force timed_out")
	}
	// The first answer that is not a result must be -32014; the timeouts
	// count against the breaker, which then refuses further calls for a
	// while (-32010), as it should for an engine that keeps timing out.
	// Whether a shard checks its timeout before it finishes varies from
	// search to search (the engine above timed out only some), so the
	// sidecar is asked until one times out: up to 200 times, a bound that
	// a per-search timeout rate of even 10 % passes with certainty.
	served := 0
	var first *rpcError
	for range 200 {
		// k = 200 (the default max_k): a top-10 search prunes most documents
		// and may finish before a shard checks its timeout.
		if _, first = s.retrieve(query, 200, ""); first != nil {
			break
		}
		served++
	}
	t.Logf("%s cluster, timed_out: the engine timed out %d of 10 searches; through the sidecar %d served before the first error, %s",
		c.e.name, engineTimedOut, served, first)
	if first == nil || first.Code != -32014 || !first.retryable() {
		t.Errorf("a search the engine times out answered %s, want -32014 retryable", first)
	}
}

// outcome counts what the clients saw during the kill.
type outcome struct {
	mu       sync.Mutex
	pages    int
	restarts int            // paginations restarted after -32015
	codes    map[int]int    // error codes seen
	retried  int            // retryable errors that a retry then served
	stranded []string       // retryable errors that no retry served
	diffs    []listDiff     // one per pagination
	notes    map[string]int // usage.notes seen
	first    map[int]string // the first error of each code
}

func newOutcome() *outcome {
	return &outcome{codes: map[int]int{}, notes: map[string]int{}, first: map[int]string{}}
}

// saw counts an error.
func (o *outcome) saw(e *rpcError) {
	o.codes[e.Code]++
	if _, ok := o.first[e.Code]; !ok {
		o.first[e.Code] = e.String()
	}
}

func (o *outcome) add(f func(o *outcome)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f(o)
}

func (o *outcome) String() string {
	var dups, gaps, reorders, ties, clean int
	for _, d := range o.diffs {
		dups, gaps, reorders, ties = dups+d.dups, gaps+d.gaps, reorders+d.reorders, ties+d.ties
		if d.clean() {
			clean++
		}
	}
	return fmt.Sprintf("%d paginations complete and identical to the list taken before the kill: %d; pages %d, duplicates %d, gaps %d, reorderings %d (equal-score swaps %d), restarts after -32015 %d, errors %v, retryable errors a retry served %d, stranded %d",
		len(o.diffs), clean, o.pages, dups, gaps, reorders, ties, o.restarts, o.codes, o.retried, len(o.stranded))
}

// paginate reads depth hits of query in pages of pageSize; before it reads
// page 2 it waits for go. A -32015 (or -32016) restarts the pagination
// from its first page, as §12 tells a client; a retryable error is retried
// after its retryAfterMs, at most 6 times.
func paginate(s *serve, query string, whole []hit, o *outcome, goAhead <-chan struct{}, pace time.Duration) {
	var got []hit
	cursor := ""
	first := true
loop:
	for attempt := 0; len(got) < depth; {
		p, err := s.retrieve(query, pageSize, cursor)
		switch {
		case err == nil:
			o.add(func(o *outcome) {
				o.pages++
				if attempt > 0 {
					o.retried++
				}
				for _, n := range p.Usage.Notes {
					o.notes[n]++
				}
			})
			attempt = 0
			got = append(got, p.Hits...)
			cursor = p.NextCursor
			if first {
				first = false
				<-goAhead
			} else {
				time.Sleep(pace)
			}
			if cursor == "" {
				break loop
			}
			continue
		case err.Code == -32015 || err.Code == -32016:
			o.add(func(o *outcome) { o.saw(err); o.restarts++ })
			if err.retryable() {
				o.add(func(o *outcome) { o.stranded = append(o.stranded, "retryable "+err.String()) })
			}
			got, cursor, attempt = nil, "", 0
			continue
		case err.retryable() && attempt < 6:
			o.add(func(o *outcome) { o.saw(err) })
			attempt++
			time.Sleep(time.Duration(max(err.Data.RetryAfterMs, 500)) * time.Millisecond)
			continue
		default:
			o.add(func(o *outcome) {
				o.saw(err)
				o.stranded = append(o.stranded, err.String())
			})
		}
		break loop
	}
	o.add(func(o *outcome) { o.diffs = append(o.diffs, diffLists(got[:min(len(got), depth)], whole)) })
}

// firstPages retrieves fresh first pages of queries in turn until stop,
// counting those served and the errors.
type firstPages struct {
	served, failed atomic.Int64
	mu             sync.Mutex
	codes          map[int]int
}

func (f *firstPages) run(s *serve, queries []beir.Query, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if _, err := s.retrieve(queries[i%len(queries)].Text, 10, ""); err != nil {
			f.failed.Add(1)
			f.mu.Lock()
			f.codes[err.Code]++
			f.mu.Unlock()
		} else {
			f.served.Add(1)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writer sends index/add batches with explicit ids until stop and keeps
// the ids acknowledged.
type writer struct {
	acked  []string
	failed map[int]int
	sent   int
}

func (w *writer) run(s *serve, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	for b := 0; ; b++ {
		select {
		case <-stop:
			return
		default:
		}
		docs := make([]map[string]any, writeBatch)
		for i := range docs {
			docs[i] = map[string]any{"id": fmt.Sprintf("w-%05d-%02d", b, i), "text": fmt.Sprintf("batch %d document %d about cell biology", b, i),
				"meta": map[string]any{"title": fmt.Sprintf("w %d %d", b, i)}}
		}
		w.sent += len(docs)
		var r struct {
			IDs []string `json:"ids"`
		}
		if err := s.call("index/add", map[string]any{"documents": docs}, &r); err != nil {
			w.failed[err.Code]++
		} else {
			w.acked = append(w.acked, r.IDs...)
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// nodeKill kills (SIGKILL) the data node holding the most primaries of the
// writes index while paginations are in flight, fresh first pages are
// asked for and index/add batches are written, then restarts it.
func (c *cluster) nodeKill(bin string, ix indices, ds *beir.Dataset) {
	t := c.t
	victim := c.victim(ix.writes)
	onVictim := 0
	for _, s := range c.shards(ix.scifact) {
		if s.Node == c.names[victim] {
			onVictim++
		}
	}
	t.Logf("killing %s (%s): it holds %d copies of %s's shards", c.names[victim], c.urls[victim], onVictim, ix.scifact)

	type run struct {
		name  string
		s     *serve
		whole map[string][]hit
		o     *outcome
	}
	runs := []*run{{name: "offsets (default settings)", s: c.startServe(bin, backend{urls: c.urls, index: ix.scifact})}}
	if c.e.pit {
		runs = append(runs, &run{name: "pit: true", s: c.startServe(bin, backend{urls: c.urls, index: ix.scifact, pit: true})})
	}
	queries := ds.Queries[:pagedQueries]
	for _, r := range runs {
		r.whole, r.o = map[string][]hit{}, newOutcome()
		for _, q := range queries {
			p, err := r.s.retrieve(q.Text, depth, "")
			if err != nil || len(p.Hits) != depth {
				t.Fatalf("%s: whole list of %s before the kill: %d hits, %s", r.name, q.ID, len(p.Hits), err)
			}
			r.whole[q.Text] = p.Hits
		}
	}
	sw := c.startServe(bin, backend{urls: c.urls, index: ix.writes, writable: true})
	sl := c.startServe(bin, backend{name: "lone", urls: c.urls, index: ix.lone})
	if _, err := sl.retrieve("cell biology", 10, ""); err != nil {
		t.Fatalf("the unreplicated index before the kill: %s", err)
	}

	// Paginations read their first page, the writer starts, then the kill.
	goAhead := make(chan struct{})
	var pwg sync.WaitGroup
	for _, r := range runs {
		for _, q := range queries {
			pwg.Go(func() { paginate(r.s, q.Text, r.whole[q.Text], r.o, goAhead, time.Second) })
		}
	}
	stop := make(chan struct{})
	var bg sync.WaitGroup
	w := &writer{failed: map[int]int{}}
	bg.Add(1)
	go w.run(sw, stop, &bg)
	fresh := make([]*firstPages, len(runs))
	for i, r := range runs {
		fresh[i] = &firstPages{codes: map[int]int{}}
		bg.Add(1)
		go fresh[i].run(r.s, ds.Queries[pagedQueries:], stop, &bg)
	}
	time.Sleep(time.Second)
	killed := time.Now()
	c.kill(victim)
	close(goAhead)
	t.Logf("killed %s", c.names[victim])
	pwg.Wait()
	t.Logf("paginations done %s after the kill", time.Since(killed).Round(time.Millisecond))

	// With the node gone: the unreplicated index lost a primary, answers
	// are partial.
	c.awaitLeft(victim)
	c.checkLostShard(sl, ix.lone)
	t.Run("Readiness", func(t *testing.T) { c.with(t).checkReadiness(sl, runs[0].s, ix) })
	// A serve whose urls list the dead node first.
	c.checkDeadFirst(bin, victim, ix.scifact, ds)

	t.Logf("restarting %s", c.names[victim])
	c.restart(victim)
	back := time.Since(killed)
	c.health("green", ix.writes)
	close(stop)
	bg.Wait()
	t.Logf("%s back after %s", c.names[victim], back.Round(time.Second))

	for i, r := range runs {
		served, failed := fresh[i].served.Load(), fresh[i].failed.Load()
		t.Logf("%s cluster, paging with %s during the kill: %s", c.e.name, r.name, r.o)
		t.Logf("%s cluster, fresh first pages with %s from the kill to the node's return: %d served, %d refused %v", c.e.name, r.name, served, failed, fresh[i].codes)
		for n, k := range r.o.notes {
			t.Logf("  note %q on %d pages", n, k)
		}
		for _, d := range r.o.diffs {
			if !d.clean() {
				t.Errorf("%s: a pagination during the kill: %+v", r.name, d)
			}
		}
		if len(r.o.diffs) != pagedQueries {
			t.Errorf("%s: %d of %d paginations finished", r.name, len(r.o.diffs), pagedQueries)
		}
		if len(r.o.stranded) > 0 {
			t.Errorf("%s: errors a client could not act on: %v", r.name, r.o.stranded)
		}
		for code, first := range r.o.first {
			t.Logf("  first %d: %s", code, first)
			// -32010 and -32014 are allowed only as what a retry then
			// served (stranded counts the others).
			if code != -32015 && code != -32016 && code != -32010 && code != -32014 {
				t.Errorf("%s: error %s during the kill", r.name, first)
			}
		}
		if !c.e.pit || r.name != "pit: true" {
			if r.o.restarts > 0 {
				t.Errorf("%s: %d paginations restarted: offsets need no point in time to lose", r.name, r.o.restarts)
			}
		}
		if served == 0 || failed*10 > served {
			t.Errorf("%s: fresh first pages during the kill: %d served, %d refused %v", r.name, served, failed, fresh[i].codes)
		}
	}

	found := c.countIDs(ix.writes, w.acked)
	t.Logf("%s cluster, index/add during the kill: %d documents sent in batches of %d, %d acknowledged, %d of them found afterwards, refused batches %v",
		c.e.name, w.sent, writeBatch, len(w.acked), found, w.failed)
	if found != len(w.acked) {
		t.Errorf("%d acknowledged documents lost", len(w.acked)-found)
	}
	if len(w.acked) == 0 {
		t.Error("no write was acknowledged during the kill")
	}
	if _, err := sl.retrieve("cell biology", 10, ""); err != nil {
		c.health("green", ix.lone)
		if _, err := sl.retrieve("cell biology", 10, ""); err != nil {
			t.Errorf("the unreplicated index after the node's return: %s", err)
		}
	}
}

// checkLostShard: the engine's own answer on the index whose primary was
// on the dead node is partial (Elasticsearch: _shards.failed 1;
// OpenSearch: successful 2 of 3, failed 0), and a retrieve through
// the sidecar is -32010 with retryable true (the shard comes back with
// its node), never hits from two of three shards.
func (c *cluster) checkLostShard(s *serve, index string) {
	t := c.t
	t.Helper()
	if h := c.indexHealth(index); h != "red" {
		t.Errorf("%s is %s with one of its primaries on the dead node, want red", index, h)
	}
	var r struct {
		Shards struct {
			Total, Successful, Failed int
			Failures                  []struct {
				Reason struct{ Type string }
			}
		} `json:"_shards"`
	}
	_ = json.Unmarshal(c.must(http.MethodPost, "/"+index+"/_search", map[string]any{"query": map[string]any{"match": map[string]any{"text": "cell"}}}), &r)
	var types []string
	for _, f := range r.Shards.Failures {
		types = append(types, f.Reason.Type)
	}
	sort.Strings(types)
	t.Logf("%s cluster, the engine's answer with a primary gone: _shards.total %d, successful %d, failed %d %v",
		c.e.name, r.Shards.Total, r.Shards.Successful, r.Shards.Failed, types)
	if r.Shards.Failed == 0 && r.Shards.Successful == r.Shards.Total {
		t.Errorf("the engine answered the index with a lost primary as a whole answer")
	}
	_, err := s.retrieve("cell biology", 10, "")
	t.Logf("%s cluster, retrieve on the index with a lost primary: %s", c.e.name, err)
	if err == nil || err.Code != -32010 || !err.retryable() {
		t.Errorf("retrieve with a lost primary: %s, want -32010 retryable", err)
	}
}

// checkDeadFirst starts serve with the dead node listed first in urls
// (dead from the start): it becomes ready and serves 60 of 60 retrieves.
func (c *cluster) checkDeadFirst(bin string, victim int, index string, ds *beir.Dataset) {
	t := c.t
	t.Helper()
	urls := []string{c.urls[victim]}
	for i, u := range c.urls {
		if i != victim {
			urls = append(urls, u)
		}
	}
	if ln, err := net.Dial("tcp", strings.TrimPrefix(c.urls[victim], "http://")); err == nil {
		ln.Close()
		t.Fatalf("the killed node still accepts connections at %s", c.urls[victim])
	}
	s := c.startServe(bin, backend{urls: urls, index: index})
	served := 0
	codes := map[int]int{}
	for i := range 60 {
		if _, err := s.retrieve(ds.Queries[i].Text, 10, ""); err != nil {
			codes[err.Code]++
		} else {
			served++
		}
	}
	t.Logf("%s cluster, urls with the dead node first: %d of 60 retrieves served, errors %v", c.e.name, served, codes)
	if served != 60 {
		t.Errorf("urls with a dead node first: %d of 60 served (%v)", served, codes)
	}
	s.Stop()
}

// checkReadiness, with the node gone: the backend over the index that
// lost a primary (red) is not ready, and /readyz names it; the backend
// over the replicated index (yellow: its copies on the dead node are not
// reallocated) is ready, and /readyz says it is yellow.
func (c *cluster) checkReadiness(red, yellow *serve, ix indices) {
	t := c.t
	t.Helper()
	if h := c.indexHealth(ix.scifact); h != "yellow" {
		t.Fatalf("%s is %s with the node gone, want yellow", ix.scifact, h)
	}
	await := func(s *serve, want int, ok func(string) bool) (int, string) {
		end := time.Now().Add(30 * time.Second)
		for {
			code, body := s.readyz()
			if (code == want && ok(body)) || time.Now().After(end) {
				return code, body
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	code, body := await(red, http.StatusServiceUnavailable, func(b string) bool { return strings.Contains(b, "lone") })
	t.Logf("%s cluster, /readyz over the red index: %d %q", c.e.name, code, body)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "lone") {
		t.Errorf("/readyz over a red index: %d %q, want 503 naming backend lone", code, body)
	}
	code, body = await(yellow, http.StatusOK, func(b string) bool { return strings.Contains(b, "yellow") })
	t.Logf("%s cluster, /readyz over the yellow index: %d %q", c.e.name, code, body)
	if code != http.StatusOK || !strings.Contains(body, "yellow") {
		t.Errorf("/readyz over a yellow index: %d %q, want 200 noting yellow", code, body)
	}
}
