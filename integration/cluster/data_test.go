package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
)

// tieBreaker is BEIR's BM25 multifield baseline's (best_fields over title
// and text), as the sidecar's backend is configured.
const tieBreaker = beir.TieBreaker

// fidelityQueries is SciFact's whole test split.
const fidelityQueries = 300

// sciFact loads SciFact (beir.FidelityData: $RCP_SCIFACT_DIR, beside the
// repository, the cache, a download; else beir's generated corpus).
func sciFact(t *testing.T) *beir.Dataset {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ds, src, err := beir.FidelityData(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dataset: %s (%d documents, %d test queries)", src.About, len(ds.Docs), len(ds.Queries))
	return ds
}

// load bulk-indexes docs into index and refreshes it.
func (c *cluster) load(index string, docs []beir.Doc) {
	c.t.Helper()
	for chunk := range slices.Chunk(docs, 500) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		for _, d := range chunk {
			_ = enc.Encode(map[string]any{"index": map[string]string{"_id": d.ID}})
			_ = enc.Encode(map[string]string{"title": d.Title, "text": d.Text})
		}
		var r struct{ Errors bool }
		if err := json.Unmarshal(c.must(http.MethodPost, "/"+index+"/_bulk", b.Bytes()), &r); err != nil || r.Errors {
			c.t.Fatalf("bulk into %s: errors %v %v", index, r.Errors, err)
		}
	}
	c.must(http.MethodPost, "/"+index+"/_refresh", nil)
}

// direct is the engine's own answer to query: the multi_match the
// backend's settings describe, written out here as plain JSON so the
// comparison shares no code with the adapter.
func (c *cluster) direct(base, index, query string, k int) ([]hit, error) {
	body := map[string]any{
		"query": map[string]any{"multi_match": map[string]any{"query": query, "fields": []string{"title", "text"},
			"tie_breaker": tieBreaker}},
		"size": k, "_source": false, "track_total_hits": false,
	}
	status, raw, err := do(http.MethodPost, base+"/"+index+"/_search", body)
	if err != nil {
		return nil, err
	}
	if status != 200 {
		return nil, fmt.Errorf("direct search: %d %s", status, raw)
	}
	var r struct {
		Shards struct{ Failed int } `json:"_shards"`
		Hits   struct {
			Hits []struct {
				ID    string  `json:"_id"`
				Score float64 `json:"_score"`
			}
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	if r.Shards.Failed > 0 {
		return nil, fmt.Errorf("direct search: %d shards failed", r.Shards.Failed)
	}
	out := make([]hit, len(r.Hits.Hits))
	for i, h := range r.Hits.Hits {
		out[i] = hit{h.ID, h.Score}
	}
	return out, nil
}

// listDiff compares a paged list against the whole list taken before:
// duplicates (an id served twice), gaps (an id of the whole list never
// served) and reorderings (a position whose id differs where the scores
// differ too: hits of equal score may trade places only when a page came
// from another shard copy).
type listDiff struct{ dups, gaps, reorders, ties int }

func diffLists(paged, whole []hit) listDiff {
	var d listDiff
	seen := map[string]bool{}
	for _, h := range paged {
		if seen[h.ID] {
			d.dups++
		}
		seen[h.ID] = true
	}
	for _, h := range whole {
		if !seen[h.ID] {
			d.gaps++
		}
	}
	for i := range min(len(paged), len(whole)) {
		if paged[i].ID != whole[i].ID {
			if paged[i].Score == whole[i].Score {
				d.ties++
			} else {
				d.reorders++
			}
		}
	}
	if len(paged) != len(whole) {
		d.reorders += max(len(paged), len(whole)) - min(len(paged), len(whole))
	}
	return d
}

func (d listDiff) clean() bool { return d.dups == 0 && d.gaps == 0 && d.reorders == 0 }
