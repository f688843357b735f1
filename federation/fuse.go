package federation

import (
	"maps"

	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Hit meta keys set on every fused hit (§16.3).
const (
	MetaEngine      = "engine"
	MetaEngineRank  = "engineRank"
	MetaEngineScore = "engineScore"
)

// fusion is the chosen strategy for one query.
type fusion struct {
	method rcp.FusionMethod
	note   string
}

// chooseFusion applies §16.3: convex when every participating engine
// advertises scoreFloor and the client asked for convex or did not ask;
// RRF otherwise (a MUST fallback when convex cannot be honoured).
func chooseFusion(p *rcp.RetrieveParams, outs []outcome) fusion {
	asked := methodOf(p)
	floors := true
	for _, o := range outs {
		floors = floors && o.t.e.Backend.Capabilities().Retrieve.ScoreFloor != nil
	}
	switch {
	case (asked == "" || asked == rcp.FusionConvex) && floors:
		return fusion{method: rcp.FusionConvex}
	case asked == rcp.FusionConvex:
		return fusion{method: rcp.FusionRRF, note: "convex fusion needs scoreFloor from every engine; fused by rrf"}
	case asked == rcp.FusionWeighted:
		return fusion{method: rcp.FusionWeighted}
	}
	return fusion{method: rcp.FusionRRF}
}

// key is a hit's fusion identity: its stringified id within its engine's
// namespace (see the package doc). The NUL separator sorts below every
// printable byte, so ordering keys orders by hit id first, which keeps
// the §16.3 id tie-break.
func key(engineID, hitID string) string { return hitID + "\x00" + engineID }

// fuse merges the answered lists into at most k hits (§16.3).
func (a *Aggregator) fuse(r *request, outs []outcome) *rcp.RetrieveResult {
	lists := make([][]rankmath.Ranked, len(outs))
	weights := make([]float64, len(outs))
	floors := make([]float64, len(outs))
	byKey := map[string]rcp.Hit{}
	candidates := 0
	for i, o := range outs {
		weights[i] = o.t.e.Weight
		if f := o.t.e.Backend.Capabilities().Retrieve.ScoreFloor; f != nil {
			floors[i] = *f
		}
		for _, h := range o.res.Hits {
			k := key(o.t.e.ID, h.ID)
			if _, dup := byKey[k]; !dup {
				byKey[k] = h
			}
			lists[i] = append(lists[i], rankmath.Ranked{ID: k, Score: h.Score})
		}
		candidates += len(o.res.Hits)
	}
	fz := chooseFusion(r.p, outs)
	fused := runFusion(fz.method, lists, weights, floors, rrfK(r.p))
	res := &rcp.RetrieveResult{Hits: tagHits(fused[:min(len(fused), r.k)], outs, byKey), Usage: &rcp.Usage{Candidates: &candidates}}
	res.Usage.Notes = append(res.Usage.Notes, "federated fusion: "+string(fz.method))
	res.Usage.Notes = append(res.Usage.Notes, downstreamNotes(outs)...)
	if fz.note != "" {
		res.Usage.Notes = append(res.Usage.Notes, fz.note)
	}
	return res
}

func rrfK(p *rcp.RetrieveParams) int {
	if p.Fusion != nil && p.Fusion.RRFK != nil {
		return *p.Fusion.RRFK
	}
	return rankmath.DefaultRRFK
}

func runFusion(m rcp.FusionMethod, lists [][]rankmath.Ranked, weights, floors []float64, k int) []rankmath.Fused {
	switch m {
	case rcp.FusionConvex:
		return rankmath.ConvexFuse(lists, floors, weights)
	case rcp.FusionWeighted:
		return rankmath.WeightedFuse(lists, weights)
	}
	return rankmath.RRF(lists, weights, k)
}

// tagHits builds the result hits: the engine's hit with the fused score
// and meta.engine, meta.engineRank and meta.engineScore (§16.3).
func tagHits(fs []rankmath.Fused, outs []outcome, byKey map[string]rcp.Hit) []rcp.Hit {
	hits := make([]rcp.Hit, len(fs))
	for i, f := range fs {
		h := byKey[f.ID]
		src := origin(f)
		meta := maps.Clone(h.Meta)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[MetaEngine] = outs[src].t.e.ID
		meta[MetaEngineRank] = f.Ranks[src]
		meta[MetaEngineScore] = f.Scores[src]
		h.Meta = meta
		h.Score = f.Score
		hits[i] = h
	}
	return hits
}

// origin is the index of the list a fused entry came from (its only list,
// since keys are per engine).
func origin(f rankmath.Fused) int {
	for i, r := range f.Ranks {
		if r != 0 {
			return i
		}
	}
	return 0
}

// downstreamNotes relays the usage notes of engines that federate further,
// prefixed with their id, so skips and cycles deeper in the federation
// stay visible to the caller.
func downstreamNotes(outs []outcome) []string {
	var notes []string
	for _, o := range outs {
		if !(o.t.e.Forwards || forwards(o.t.e.Backend)) || o.res.Usage == nil {
			continue
		}
		for _, n := range o.res.Usage.Notes {
			notes = append(notes, "engine "+o.t.e.ID+": "+n)
		}
	}
	return notes
}
