package retrieval_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// gatedReporter records what it receives and answers the optional
// ProgressEnabled/LogEnabled questions with its flags.
type gatedReporter struct {
	progressOn, logOn bool

	mu      sync.Mutex
	partial [][]rcp.Hit
	logs    int
}

func (g *gatedReporter) ProgressEnabled() bool    { return g.progressOn }
func (g *gatedReporter) LogEnabled(_ string) bool { return g.logOn }
func (g *gatedReporter) Progress(_ string, _ float64, _ string, partial []rcp.Hit) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.partial = append(g.partial, partial)
}
func (g *gatedReporter) Log(string, string, string, map[string]any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.logs++
}

func TestReporterGates(t *testing.T) {
	for _, tc := range []struct {
		name              string
		progress, log     bool
		wantCalls, wantLg int
	}{
		{"both off", false, false, 0, 0},
		{"progress only", true, false, 1, 0},
		{"log only", false, true, 0, 1},
		{"both on", true, true, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newEngine(t, setup{})
			g := &gatedReporter{progressOn: tc.progress, logOn: tc.log}
			ctx := rcp.WithReporter(context.Background(), g)
			res, err := e.Retrieve(ctx, params(t, `{"query":"solar electricity","k":3,"mode":"sparse"}`))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || len(g.partial) != tc.wantCalls || g.logs != tc.wantLg {
				t.Errorf("hits %d progress %d logs %d, want progress %d logs %d",
					len(res.Hits), len(g.partial), g.logs, tc.wantCalls, tc.wantLg)
			}
		})
	}
}

// TestPartialMatchesPage: the recall partial and the returned first page
// are the same hits, scores included, and do not alias each other.
func TestPartialMatchesPage(t *testing.T) {
	for _, js := range []string{
		`{"query":"solar electricity","k":3,"mode":"sparse"}`,
		`{"query":"solar electricity","k":3,"mode":"sparse","minScore":0.5}`,
		`{"query":"solar electricity","k":50,"mode":"sparse"}`,
	} {
		e, _ := newEngine(t, setup{})
		g := &gatedReporter{progressOn: true}
		res, err := e.Retrieve(rcp.WithReporter(context.Background(), g), params(t, js))
		if err != nil {
			t.Fatal(err)
		}
		plain := retrieve(t, e, js)
		if len(g.partial) != 1 {
			t.Fatalf("%s: %d progress calls", js, len(g.partial))
		}
		if d := cmp.Diff(plain.Hits, res.Hits); d != "" {
			t.Errorf("%s: reported run differs from plain run (-plain +reported):\n%s", js, d)
		}
		want := g.partial[0][:min(len(g.partial[0]), len(res.Hits))]
		if d := cmp.Diff(want, res.Hits[:len(want)]); d != "" {
			t.Errorf("%s: page differs from partial:\n%s", js, d)
		}
		if len(res.Hits) > 0 {
			res.Hits[0].ID = "changed"
			if g.partial[0][0].ID == "changed" {
				t.Errorf("%s: result aliases the progress partial", js)
			}
		}
	}
}

// TestSingleStageScores: Hit.scores of a one-stage list carries the stage
// score equal to the hit's score. The page's scores share one allocation,
// so appending to one hit's must not reach the next hit's.
func TestSingleStageScores(t *testing.T) {
	e, _ := newEngine(t, setup{})
	res := retrieve(t, e, `{"query":"solar electricity","k":5,"mode":"sparse"}`)
	for _, h := range res.Hits {
		if s, ok := h.Scores.Lookup("sparse"); !ok || s != h.Score || len(h.Scores) != 1 {
			t.Errorf("%s: scores %v score %v", h.ID, h.Scores, h.Score)
		}
	}
	if len(res.Hits) < 2 {
		t.Fatalf("%d hits", len(res.Hits))
	}
	before := res.Hits[1].Scores.Get("sparse")
	_ = append(res.Hits[0].Scores, rcp.StageScore{Stage: "x", Score: -1})
	if got := res.Hits[1].Scores; got.Get("sparse") != before || len(got) != 1 {
		t.Errorf("appending to hit 0's scores changed hit 1's: %v", got)
	}
}
