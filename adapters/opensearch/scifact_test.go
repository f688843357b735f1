package opensearch

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestSciFactSparseFidelity loads SciFact into the live node and checks,
// query by query, that sparse retrieval through the sidecar (Engine over
// this adapter) returns exactly the ids, in the same order, as the same
// multi_match sent to OpenSearch directly; it reports nDCG@10 of both.
// RCP_SCIFACT_QUERIES sets how many test queries run (default 30; 300 is
// the whole test split). candidateK is 10 so both sides fetch the same
// window and the logged latencies compare the adapter's overhead only
// (the default candidateK of 100 fetches ten times the hits).
func TestSciFactSparseFidelity(t *testing.T) {
	base := liveURL(t)
	dir := sciFactDir(t)
	n := 30
	if v, err := strconv.Atoi(os.Getenv("RCP_SCIFACT_QUERIES")); err == nil && v > 0 {
		n = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	eng, index := sciFactEngine(ctx, t, base, dir)
	queries := readQueries(t, dir, n)
	qrels := readQrels(t, dir)
	var mismatches int
	var direct, sidecar float64
	var directTime, sidecarTime time.Duration
	for _, q := range queries {
		start := time.Now()
		want := directSearch(ctx, t, base, index, q.Text)
		directTime += time.Since(start)
		start = time.Now()
		res, err := eng.Retrieve(ctx, &rcp.RetrieveParams{Query: rcp.TextQuery(q.Text), K: ptrTo[int64](10), CandidateK: ptrTo[int64](10), Mode: rcp.ModeSparse})
		sidecarTime += time.Since(start)
		if err != nil {
			t.Fatalf("query %s: %v", q.ID, err)
		}
		got := make([]string, len(res.Hits))
		for i, h := range res.Hits {
			got[i] = h.ID
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			mismatches++
			t.Errorf("query %s: sidecar %v, direct %v", q.ID, got, want)
		}
		direct += ndcg10(want, qrels[q.ID])
		sidecar += ndcg10(got, qrels[q.ID])
	}
	t.Logf("SciFact sparse, %d queries: identical ids/order %d/%d; nDCG@10 direct %.4f sidecar %.4f",
		len(queries), len(queries)-mismatches, len(queries), direct/float64(len(queries)), sidecar/float64(len(queries)))
	t.Logf("mean latency: direct %v, sidecar %v (sequential, same node)",
		directTime/time.Duration(len(queries)), sidecarTime/time.Duration(len(queries)))
	if len(queries) == 300 && direct/300 < 0.6 {
		t.Errorf("direct nDCG@10 %.4f is far below BM25's published 0.665: the index is wrong", direct/300)
	}
}

func ptrTo[T any](v T) *T { return &v }

func sciFactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RCP_SCIFACT_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "datasets", "scifact")
	}
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl.gz")); err != nil {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatalf("SciFact not found at %s (set RCP_SCIFACT_DIR)", dir)
		}
		t.Skipf("SKIPPED: SciFact not found at %s (set RCP_SCIFACT_DIR)", dir)
	}
	return dir
}

// sciFactEngine loads the corpus (once per node: the index is reused when
// it already holds every document) and returns an Engine over it.
func sciFactEngine(ctx context.Context, t *testing.T, base, dir string) (*adapters.Engine, string) {
	t.Helper()
	const index = "rcp-scifact"
	cfg := DefaultConfig()
	cfg.URLs, cfg.Index, cfg.Writable, cfg.Refresh = []string{base}, index, true, "false"
	cfg.TextFields = []FieldConfig{{Name: "title"}, {Name: "text"}}
	docs := readCorpus(t, dir)
	if count(ctx, base, index) != len(docs) {
		deleteIndex(base, index)
		body := map[string]any{"settings": map[string]any{"index": map[string]any{"number_of_shards": 1, "number_of_replicas": 0}},
			"mappings": map[string]any{"properties": map[string]any{"title": map[string]any{"type": "text"}, "text": map[string]any{"type": "text"}}}}
		if err := createIndex(ctx, base, index, body); err != nil {
			t.Fatal(err)
		}
		loadCorpus(ctx, t, cfg, docs)
	}
	a, err := Factory.Open(ctx, cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := adapters.NewEngine(ctx, a, adapters.EngineOptions{Name: "scifact", Version: "test",
		Policy: capability.Policy{MaxK: 100}, CursorKey: []byte("scifact-test-cursor-key-000000000")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng, index
}

func loadCorpus(ctx context.Context, t *testing.T, cfg *Config, docs []adapters.Document) {
	t.Helper()
	a, err := Factory.Open(ctx, cfg, adapters.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(docs); i += 500 {
		if err := a.(adapters.Writer).Upsert(ctx, docs[i:min(i+500, len(docs))]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.(*adapter).http.do(ctx, http.MethodPost, "/"+cfg.Index+"/_refresh", nil, false); err != nil {
		t.Fatal(err)
	}
}

func count(ctx context.Context, base, index string) int {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/"+index+"/_count", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	var c struct{ Count int }
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&c) != nil {
		return -1
	}
	return c.Count
}

// directSearch sends the plain multi_match a user would write.
func directSearch(ctx context.Context, t *testing.T, base, index, q string) []string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"size": 10, "_source": false,
		"query": map[string]any{"multi_match": map[string]any{"query": q, "fields": []string{"title", "text"}, "type": "best_fields"}}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/"+index+"/_search", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var sr struct {
		Hits struct {
			Hits []struct {
				ID string `json:"_id"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.NewDecoder(res.Body).Decode(&sr); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(sr.Hits.Hits))
	for i, h := range sr.Hits.Hits {
		ids[i] = h.ID
	}
	return ids
}

// ndcg10 is nDCG@10 with graded gains (SciFact grades are all 1).
func ndcg10(ranked []string, rel map[string]int) float64 {
	var dcg float64
	for i, id := range ranked[:min(10, len(ranked))] {
		dcg += float64(rel[id]) / math.Log2(float64(i+2))
	}
	gains := make([]int, 0, len(rel))
	for _, g := range rel {
		gains = append(gains, g)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(gains)))
	var idcg float64
	for i, g := range gains[:min(10, len(gains))] {
		idcg += float64(g) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

type sciQuery struct {
	ID   string `json:"_id"`
	Text string `json:"text"`
}

// readQueries returns the first n queries that have test judgements.
func readQueries(t *testing.T, dir string, n int) []sciQuery {
	t.Helper()
	qrels := readQrels(t, dir)
	var out []sciQuery
	eachLine(t, filepath.Join(dir, "queries.jsonl"), func(line []byte) {
		var q sciQuery
		if err := json.Unmarshal(line, &q); err != nil {
			t.Fatal(err)
		}
		if _, ok := qrels[q.ID]; ok && len(out) < n {
			out = append(out, q)
		}
	})
	return out
}

func readQrels(t *testing.T, dir string) map[string]map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "qrels", "test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			continue
		}
		g, _ := strconv.Atoi(f[2])
		if out[f[0]] == nil {
			out[f[0]] = map[string]int{}
		}
		out[f[0]][f[1]] = g
	}
	return out
}

func readCorpus(t *testing.T, dir string) []adapters.Document {
	t.Helper()
	var docs []adapters.Document
	eachLine(t, filepath.Join(dir, "corpus.jsonl.gz"), func(line []byte) {
		var raw struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(line, &raw); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, adapters.Document{ID: raw.ID, Text: raw.Text, Meta: map[string]any{"title": raw.Title}})
	})
	return docs
}

// eachLine calls fn for every non-empty line of a (optionally gzipped) file.
func eachLine(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(fmt.Errorf("%s: %w", path, err))
		}
		defer gz.Close()
		r = gz
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			fn(sc.Bytes())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
