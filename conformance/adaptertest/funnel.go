package adaptertest

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

func testFunnel(t *testing.T, mk HarnessMaker) {
	e := newEnv(t, mk, full)
	t.Run("ClampK", func(t *testing.T) {
		// §12: k > maxK is clamped, never an error.
		res := e.mustRetrieve(t, e.anyQuery().With("k", e.maxK()+1000))
		e.checkHits(t, res, e.maxK())
	})
	t.Run("ClampCandidateK", func(t *testing.T) {
		res := e.mustRetrieve(t, e.anyQuery().With("k", 5).With("candidateK", e.maxK()*10))
		e.checkHits(t, res, 5)
	})
	t.Run("CandidateKBelowK", func(t *testing.T) {
		// §7.7 funnel invariant candidateK ≥ k.
		_, rerr := e.retrieve(t, e.anyQuery().With("k", 10).With("candidateK", 5))
		wantError(t, rerr, rcp.CodeInvalidParams, "candidateK", "")
	})
	for _, tc := range []struct {
		name string
		k    any
	}{{"zero", 0}, {"negative", -1}, {"fraction", 1.5}, {"string", "5"}, {"bool", true}} {
		t.Run("InvalidK/"+tc.name, func(t *testing.T) {
			_, rerr := e.retrieve(t, e.anyQuery().With("k", tc.k))
			wantError(t, rerr, rcp.CodeInvalidParams, "k", "")
		})
	}
	t.Run("MissingQuery", func(t *testing.T) {
		_, rerr := e.retrieve(t, P{"k": 5})
		wantError(t, rerr, rcp.CodeInvalidParams, "query", "")
	})
	for _, m := range allModes {
		t.Run("UsageCandidates/"+string(m), func(t *testing.T) { e.checkUsageCandidates(t, m) })
	}
	t.Run("TokenBudget", func(t *testing.T) { e.checkTokenBudget(t) })
}

// checkUsageCandidates: usage.candidates is reported and covers the hits.
func (e *env) checkUsageCandidates(t *testing.T, m rcp.Mode) {
	e.skipUnlessMode(t, m)
	res := e.mustRetrieve(t, P{"query": modeQueries[m][0], "k": 5, "candidateK": 20, "mode": m})
	if res.Usage == nil || res.Usage.Candidates == nil {
		t.Fatalf("usage.candidates is absent")
	}
	if *res.Usage.Candidates < len(res.Hits) {
		t.Errorf("usage.candidates %d < %d hits", *res.Usage.Candidates, len(res.Hits))
	}
}

// checkTokenBudget: packing stops at the budget (§7.7.2): usage.tokens ≤
// budget, and the packed hits are a prefix of the unbudgeted list.
func (e *env) checkTokenBudget(t *testing.T) {
	if r := e.caps.Retrieve; r == nil || !r.TokenBudget {
		t.Skip("not advertised: retrieve.tokenBudget")
	}
	const budget = 30
	p := e.anyQuery().With("k", 10).With("includeText", true)
	plain := e.mustRetrieve(t, p)
	res := e.mustRetrieve(t, p.With("tokenBudget", budget))
	e.checkHits(t, res, 10)
	if res.Usage == nil || res.Usage.Tokens == nil {
		t.Fatalf("usage.tokens is absent with tokenBudget set")
	}
	if *res.Usage.Tokens > budget {
		t.Errorf("usage.tokens %d > tokenBudget %d", *res.Usage.Tokens, budget)
	}
	if len(res.Hits) >= len(plain.Hits) {
		t.Errorf("tokenBudget %d kept all %d hits of ~15 tokens each", budget, len(res.Hits))
	}
	if diff := cmp.Diff(hitIDs(plain.Hits)[:len(res.Hits)], hitIDs(res.Hits)); diff != "" {
		t.Errorf("budgeted hits are not a prefix of the ranking (-want +got):\n%s", diff)
	}
}

// testPagination: page 2 via nextCursor continues page 1 with no overlap,
// and the pages concatenated equal the top of one big request (§10).
func testPagination(t *testing.T, mk HarnessMaker) {
	e := newEnv(t, mk, full)
	if e.caps.Pagination == nil {
		t.Skip("not advertised: pagination")
	}
	base := e.anyQuery()
	t.Run("Pages", func(t *testing.T) {
		big := e.mustRetrieve(t, base.With("k", 15))
		if len(big.Hits) < 6 {
			t.Fatalf("need more than one page of hits, got %d", len(big.Hits))
		}
		var got []string
		p := base.With("k", 5)
		for page := 1; len(got) < len(big.Hits); page++ {
			res := e.mustRetrieve(t, p)
			e.checkHits(t, res, 5)
			if len(res.Hits) == 0 {
				t.Fatalf("page %d is empty with %d results left", page, len(big.Hits)-len(got))
			}
			for _, id := range hitIDs(res.Hits) {
				if slices.Contains(got, id) {
					t.Errorf("page %d repeats %s", page, id)
				}
			}
			got = append(got, hitIDs(res.Hits)...)
			if res.NextCursor == "" && len(got) < len(big.Hits) {
				t.Fatalf("page %d: nextCursor is empty with more results left", page)
			}
			p = p.With("cursor", res.NextCursor)
		}
		if diff := cmp.Diff(hitIDs(big.Hits), got[:min(len(got), len(big.Hits))]); diff != "" {
			t.Errorf("pages concatenated (-k=15 list +pages):\n%s", diff)
		}
	})
	t.Run("LastPage", func(t *testing.T) {
		res := e.mustRetrieve(t, base.With("k", len(e.schema.Docs)))
		if res.NextCursor != "" {
			next := e.mustRetrieve(t, base.With("k", len(e.schema.Docs)).With("cursor", res.NextCursor))
			if len(next.Hits) != 0 {
				t.Errorf("page after the whole corpus returned %d hits", len(next.Hits))
			}
		}
	})
	t.Run("TamperedCursor", func(t *testing.T) {
		res := e.mustRetrieve(t, base.With("k", 5))
		if res.NextCursor == "" {
			t.Fatal("no nextCursor to tamper with")
		}
		_, rerr := e.retrieve(t, base.With("k", 5).With("cursor", tamper(res.NextCursor)))
		wantError(t, rerr, rcp.CodeInvalidParams, "cursor", "")
	})
	t.Run("ForeignCursor", func(t *testing.T) {
		_, rerr := e.retrieve(t, base.With("k", 5).With("cursor", "not-a-cursor"))
		wantError(t, rerr, rcp.CodeInvalidParams, "cursor", "")
	})
}

// tamper flips one character in the middle of s.
func tamper(s string) string {
	b := []byte(s)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}
