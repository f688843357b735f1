package qdrant

import (
	"context"
	"fmt"
	"strconv"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// idKey is the payload key holding the original RCP document id.
const idKey = "_rcp_id"

// Search implements adapters.Adapter: runs the planned QueryPoints and
// converts scores to the plan's scale (distances → 1/(1+d); native MMR
// re-scored to be non-increasing).
func (a *adapter) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	if err := a.live(); err != nil {
		return nil, err
	}
	qp, err := a.request(p)
	if err != nil {
		return nil, err
	}
	points, err := a.client.Query(ctx, qp)
	if err != nil {
		return nil, opErr("query", err)
	}
	f := a.snapshot()
	out := &adapters.Candidates{Scale: p.Scale, Floor: p.Floor, Total: -1, Hits: make([]adapters.Candidate, len(points))}
	distance := p.Stage == adapters.StageDense && f.dense != nil && isDistance(f.dense.distance)
	for i, sp := range points {
		out.Hits[i] = a.candidate(sp.GetId(), sp.GetPayload(), sp.GetVectors())
		out.Hits[i].Score = score(float64(sp.GetScore()), distance)
	}
	if qp.GetQuery().GetNearestWithMmr() != nil {
		monotone(out.Hits, string(adapters.StageDense))
		out.Notes = append(out.Notes, "native Qdrant MMR; raw similarity kept in scores.dense")
	}
	return out, nil
}

// request returns the message behind p: the one Plan built when p is
// still cached, else the Body decoded (a plan built elsewhere or evicted).
func (a *adapter) request(p *adapters.Plan) (*qdrantgo.QueryPoints, error) {
	if qp := a.plans.take(p); qp != nil {
		return qp, nil
	}
	var qp qdrantgo.QueryPoints
	if err := protojson.Unmarshal(p.Body, &qp); err != nil {
		return nil, fmt.Errorf("qdrant: decode plan: %w", err)
	}
	return &qp, nil
}

// score converts a native score: a distance d becomes 1/(1+d).
func score(s float64, distance bool) float64 {
	if distance {
		return 1 / (1 + s)
	}
	return s
}

func isDistance(d qdrantgo.Distance) bool {
	return d == qdrantgo.Distance_Euclid || d == qdrantgo.Distance_Manhattan
}

// denseScale is the scale and floor of dense scores (docs/engines.md §4.3).
func denseScale(d *denseFact) (rcp.ScoreScale, *float64) {
	switch {
	case d == nil:
		return rcp.ScaleUnbounded, nil
	case d.distance == qdrantgo.Distance_Cosine:
		return rcp.ScaleCosine, floorOf(-1)
	case d.distance == qdrantgo.Distance_Dot:
		return rcp.ScaleDot, nil
	}
	return rcp.ScaleUnbounded, floorOf(0) // 1/(1+d) ∈ (0,1]
}

// monotone keeps MMR order but caps each score at its predecessor's (§4.6
// scores never increase down the list); the raw score goes to Scores[key].
func monotone(hits []adapters.Candidate, key string) {
	for i := range hits {
		raw := hits[i].Score
		hits[i].Scores = map[string]float64{key: raw}
		if i > 0 && hits[i-1].Score < raw {
			hits[i].Score = hits[i-1].Score
		}
	}
}

// candidate decodes one point: the RCP id from _rcp_id (else the point id),
// text, citation fields, the remaining payload as meta, and the vector.
func (a *adapter) candidate(id *qdrantgo.PointId, payload map[string]*qdrantgo.Value, vecs *qdrantgo.VectorsOutput) adapters.Candidate {
	c := adapters.Candidate{ID: pointID(id), Meta: make(map[string]any, len(payload))}
	for k, v := range payload {
		switch k {
		case idKey:
			c.ID = v.GetStringValue()
		case a.cfg.textField():
			c.Text = v.GetStringValue()
		default:
			c.Meta[k] = toAny(v)
		}
	}
	if a.cfg.TitleField != "" {
		c.Title = payload[a.cfg.TitleField].GetStringValue()
	}
	if a.cfg.URIField != "" {
		c.URI = payload[a.cfg.URIField].GetStringValue()
	}
	c.Vector = a.denseOf(vecs)
	return c
}

func pointID(id *qdrantgo.PointId) string {
	if u := id.GetUuid(); u != "" {
		return u
	}
	return strconv.FormatUint(id.GetNum(), 10)
}

// denseOf extracts the configured dense vector from a point's vectors.
func (a *adapter) denseOf(v *qdrantgo.VectorsOutput) []float32 {
	if v == nil {
		return nil
	}
	if a.cfg.Vector == "" && v.GetVector() != nil {
		return v.GetVector().GetDenseVector().GetData()
	}
	return v.GetVectors().GetVectors()[a.cfg.Vector].GetDenseVector().GetData()
}

// toAny converts a payload value to its JSON-shaped Go value.
func toAny(v *qdrantgo.Value) any {
	switch k := v.GetKind().(type) {
	case *qdrantgo.Value_StringValue:
		return k.StringValue
	case *qdrantgo.Value_IntegerValue:
		return float64(k.IntegerValue)
	case *qdrantgo.Value_DoubleValue:
		return k.DoubleValue
	case *qdrantgo.Value_BoolValue:
		return k.BoolValue
	case *qdrantgo.Value_ListValue:
		out := make([]any, len(k.ListValue.GetValues()))
		for i, e := range k.ListValue.GetValues() {
			out[i] = toAny(e)
		}
		return out
	case *qdrantgo.Value_StructValue:
		out := make(map[string]any, len(k.StructValue.GetFields()))
		for name, e := range k.StructValue.GetFields() {
			out[name] = toAny(e)
		}
		return out
	}
	return nil
}
