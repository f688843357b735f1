package qdrant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// opQuery is the Plan.Op of every retrieval plan.
const opQuery = "Points/Query"

// errNotProbed is returned by Plan before a successful Probe.
var errNotProbed = errors.New("qdrant: plan before probe")

// Plan implements adapters.Adapter: one stage → one QueryPoints request,
// whose Body is its protojson form with sorted keys (byte-stable).
func (a *adapter) Plan(req *adapters.SearchRequest) (*adapters.Plan, error) {
	f := a.snapshot()
	if f.collection == "" {
		return nil, errNotProbed
	}
	qp, scale, floor, err := a.build(&f, req)
	if err != nil {
		return nil, err
	}
	body, err := marshalStable(qp)
	if err != nil {
		return nil, err
	}
	p := &adapters.Plan{Adapter: Name, Stage: req.Stage, Target: f.collection, Op: opQuery, Body: body,
		Scale: scale, Floor: floor}
	a.plans.put(p, qp)
	return p, nil
}

// build assembles the request for req's stage.
func (a *adapter) build(f *facts, req *adapters.SearchRequest) (*qdrantgo.QueryPoints, rcp.ScoreScale, *float64, error) {
	filter, err := toFilter(req.Filter)
	if err != nil {
		return nil, "", nil, err
	}
	qp := &qdrantgo.QueryPoints{CollectionName: f.collection, Limit: u64(req.K), Filter: filter,
		WithPayload: a.payloadSelector(req)}
	if req.From > 0 {
		qp.Offset = u64(req.From)
	}
	if t := uint64(a.cfg.Timeout.Seconds()); t > 0 {
		qp.Timeout = &t
	}
	if req.WithVectors && f.dense != nil {
		qp.WithVectors = a.vectorSelector()
	}
	switch req.Stage {
	case adapters.StageLexical:
		return qp, rcp.ScaleBM25, floorOf(0), a.planSparse(f, req, qp)
	case adapters.StageDense:
		scale, floor := denseScale(f.dense)
		return qp, scale, floor, a.planDense(f, req, qp)
	case adapters.StageHybrid:
		return qp, rcp.ScaleUnbounded, floorOf(0), a.planHybrid(f, req, qp)
	}
	return nil, "", nil, fmt.Errorf("qdrant: unknown stage %q", req.Stage)
}

// planSparse queries the sparse vector with BM25 inference of the text.
func (a *adapter) planSparse(f *facts, req *adapters.SearchRequest, qp *qdrantgo.QueryPoints) error {
	if !f.sparse {
		return errors.New("qdrant: sparse stage without proven BM25 inference")
	}
	qp.Query, qp.Using = a.sparseQuery(req.Text), &a.cfg.SparseVector
	qp.ScoreThreshold = threshold(req.MinScore, false)
	return nil
}

func (a *adapter) sparseQuery(text string) *qdrantgo.Query {
	return qdrantgo.NewQueryNearest(qdrantgo.NewVectorInputDocument(&qdrantgo.Document{Text: text, Model: a.cfg.SparseModel}))
}

// planDense is nearest (or nearest_with_mmr) on the configured vector.
func (a *adapter) planDense(f *facts, req *adapters.SearchRequest, qp *qdrantgo.QueryPoints) error {
	if err := checkVector(f, req); err != nil {
		return err
	}
	qp.Using = a.using()
	qp.ScoreThreshold = threshold(req.MinScore, isDistance(f.dense.distance))
	if req.MMRLambda == nil {
		qp.Query = qdrantgo.NewQueryDense(req.Vector)
		return nil
	}
	if !f.mmr {
		return errors.New("qdrant: native MMR needs Qdrant ≥ 1.15")
	}
	// RCP lambda weighs relevance; Qdrant's diversity is its complement.
	div := float32(1 - *req.MMRLambda)
	cand := uint32(max(req.CandidateK, req.K+req.From))
	qp.Query = qdrantgo.NewQueryMMR(qdrantgo.NewVectorInputDense(req.Vector), &qdrantgo.Mmr{Diversity: &div, CandidatesLimit: &cand})
	return nil
}

func checkVector(f *facts, req *adapters.SearchRequest) error {
	if f.dense == nil {
		return errors.New("qdrant: dense stage without a usable dense vector")
	}
	if len(req.Vector) != f.dense.dims {
		return fmt.Errorf("qdrant: query vector has %d dims, collection vector %d", len(req.Vector), f.dense.dims)
	}
	return nil
}

// planHybrid prefetches sparse and dense candidates (the filter in each,
// as filters do not propagate into prefetches) and fuses them with RRF.
// Qdrant scores 1/(k+pos) with pos from 0, so RCP's 1/(rrfK+rank) needs
// k = rrfK+1: settable from 1.16; 1.15 fixes k=2, i.e. only rrfK=1.
func (a *adapter) planHybrid(f *facts, req *adapters.SearchRequest, qp *qdrantgo.QueryPoints) error {
	if !f.sparse {
		return errors.New("qdrant: hybrid stage without proven BM25 inference")
	}
	if err := checkVector(f, req); err != nil {
		return err
	}
	limit := u64(max(req.CandidateK, req.K+req.From))
	qp.Prefetch = []*qdrantgo.PrefetchQuery{
		{Query: a.sparseQuery(req.Text), Using: &a.cfg.SparseVector, Filter: qp.Filter, Limit: limit},
		{Query: qdrantgo.NewQueryDense(req.Vector), Using: a.using(), Filter: qp.Filter, Limit: limit},
	}
	qp.ScoreThreshold = threshold(req.MinScore, false)
	switch {
	case f.rrfK && req.RRFK > 0:
		k := uint32(req.RRFK + 1)
		qp.Query = qdrantgo.NewQueryRRF(&qdrantgo.Rrf{K: &k})
	case req.RRFK == 1:
		qp.Query = qdrantgo.NewQueryFusion(qdrantgo.Fusion_RRF)
	default:
		return fmt.Errorf("qdrant: rrfK=%d is not expressible natively on Qdrant %d.%d", req.RRFK, f.version[0], f.version[1])
	}
	return nil
}

// using names the dense vector; nil for the unnamed default vector.
func (a *adapter) using() *string {
	if a.cfg.Vector == "" {
		return nil
	}
	return &a.cfg.Vector
}

func (a *adapter) vectorSelector() *qdrantgo.WithVectorsSelector {
	if a.cfg.Vector == "" {
		return qdrantgo.NewWithVectorsEnable(true)
	}
	return qdrantgo.NewWithVectorsInclude(a.cfg.Vector)
}

// payloadSelector returns the whole payload, minus the text unless asked;
// with meta_fields only those keys and the ones the hit is built from.
func (a *adapter) payloadSelector(req *adapters.SearchRequest) *qdrantgo.WithPayloadSelector {
	if len(a.cfg.MetaFields) > 0 {
		keys := append([]string{idKey}, a.cfg.MetaFields...)
		for _, k := range []string{a.cfg.TitleField, a.cfg.URIField} {
			if k != "" {
				keys = append(keys, k)
			}
		}
		if req.WithText {
			keys = append(keys, a.cfg.textField())
		}
		slices.Sort(keys)
		return qdrantgo.NewWithPayloadInclude(slices.Compact(keys)...)
	}
	if req.WithText {
		return qdrantgo.NewWithPayloadEnable(true)
	}
	return qdrantgo.NewWithPayloadExclude(a.cfg.textField())
}

// threshold maps minScore to score_threshold. For distances the adapter
// reports s = 1/(1+d), so s ≥ m ⇔ d ≤ 1/m − 1; m ≤ 0 admits everything.
func threshold(minScore *float64, distance bool) *float32 {
	if minScore == nil {
		return nil
	}
	m := *minScore
	if !distance {
		t := float32(m)
		return &t
	}
	if m <= 0 {
		return nil
	}
	t := float32(1/m - 1)
	return &t
}

func u64(n int) *uint64 {
	v := uint64(max(n, 0))
	return &v
}

func floorOf(f float64) *float64 { return &f }

// marshalStable is protojson compacted: protojson deliberately varies its
// whitespace between runs, but its field order (by field number) and map
// order (sorted) are fixed, so the compacted bytes are stable.
func marshalStable(qp *qdrantgo.QueryPoints) (json.RawMessage, error) {
	raw, err := protojson.Marshal(qp)
	if err != nil {
		return nil, fmt.Errorf("qdrant: marshal plan: %w", err)
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("qdrant: compact plan: %w", err)
	}
	return buf.Bytes(), nil
}
