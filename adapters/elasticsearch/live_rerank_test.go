package elasticsearch

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestLiveRerankAbsent: on a node without the inference API (the
// integration distribution, 8.19 and 9.x) the probe finds no reranker,
// rerank and retrieve.rerankBuiltin are not advertised, probe says why,
// the rerank method is refused and a reranked retrieve is refused on
// its option (§7.7 strict).
func TestLiveRerankAbsent(t *testing.T) {
	base := liveURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	status, body, err := esDo(ctx, base, http.MethodGet, "/_inference/rerank/_all", nil)
	if err != nil {
		t.Fatal(err)
	}
	if status/100 == 2 {
		// The integration nodes are integ-test distributions: an inference
		// API there means the setup changed and this test needs a new oracle.
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatalf("this node has the inference API (HTTP %d %s): the negative case does not apply", status, body)
		}
		t.Skipf("SKIPPING: this node has the inference API (HTTP %d): the negative case does not apply", status)
	}
	name := newLiveIndex(ctx, t, base, "rerank-absent", map[string]any{"settings": map[string]any{"number_of_replicas": 0},
		"mappings": map[string]any{"properties": map[string]any{"text": map[string]any{"type": "text"}}}})
	a := openWritable(ctx, t, base, name, nil)
	e := engineOn(t, a)
	checkNoRerank(t, e)
	for _, r := range e.Explain() {
		if r.Capability == "rerank" && !strings.Contains(r.Why, "HTTP ") {
			t.Errorf("probe reason does not name the engine's answer: %q", r.Why)
		}
	}
	_, err = e.Retrieve(ctx, retrieveParams(t, `{"query":"moon","mode":"sparse","k":2,"rerank":{"topN":5}}`))
	var re *rcp.Error
	if !errors.As(err, &re) || re.Code != rcp.CodeOptionUnsupported || re.Data == nil || re.Data.Option != "rerank" {
		t.Errorf("reranked retrieve without rerank: %v", err)
	}
}
