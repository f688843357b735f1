// Package beir runs BEIR-style fidelity and speed comparisons between the
// sidecar (an in-process retrieval.Engine, optionally behind the RCP HTTP
// handler) and the same engine queried directly.
package beir

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Doc is one BEIR corpus document.
type Doc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Query is one BEIR query.
type Query struct {
	ID   string `json:"_id"`
	Text string `json:"text"`
}

// Dataset is a BEIR dataset read in place: the corpus, the test queries
// (in queries.jsonl order) and their relevance judgements.
type Dataset struct {
	Docs    []Doc
	Queries []Query
	Qrels   map[string]map[string]int
}

// Load reads corpus.jsonl.gz (or BEIR's plain corpus.jsonl),
// queries.jsonl and qrels/test.tsv from dir without copying them.
func Load(dir string) (*Dataset, error) {
	ds := &Dataset{}
	var err error
	if ds.Qrels, err = loadQrels(filepath.Join(dir, "qrels", "test.tsv")); err != nil {
		return nil, err
	}
	corpus, err := corpusPath(dir)
	if err != nil {
		return nil, err
	}
	if ds.Docs, err = readJSONL[Doc](corpus, strings.HasSuffix(corpus, ".gz")); err != nil {
		return nil, err
	}
	all, err := readJSONL[Query](filepath.Join(dir, "queries.jsonl"), false)
	if err != nil {
		return nil, err
	}
	for _, q := range all {
		if _, ok := ds.Qrels[q.ID]; ok {
			ds.Queries = append(ds.Queries, q)
		}
	}
	return ds, nil
}

func readJSONL[T any](path string, gz bool) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if gz {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out []T
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// loadQrels reads query-id, corpus-id, score (with a header line).
func loadQrels(path string) (map[string]map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = '\t'
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]map[string]int{}
	for _, row := range rows[1:] {
		score, err := strconv.Atoi(row[2])
		if err != nil {
			return nil, fmt.Errorf("%s: score %q: %w", path, row[2], err)
		}
		if out[row[0]] == nil {
			out[row[0]] = map[string]int{}
		}
		out[row[0]][row[1]] = score
	}
	return out, nil
}
