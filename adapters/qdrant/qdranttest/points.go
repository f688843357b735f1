package qdranttest

import (
	"context"
	"math"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// pointsSvc is the FAKE qdrant.Points service.
type pointsSvc struct {
	qdrantgo.UnimplementedPointsServer
	st *state
}

var bm25Since = [3]int{1, 15, 2}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, "Wrong input: "+format, args...)
}

func done() *qdrantgo.PointsOperationResponse {
	return &qdrantgo.PointsOperationResponse{Result: &qdrantgo.UpdateResult{Status: qdrantgo.UpdateStatus_Completed}}
}

// CreateFieldIndex adds a payload index.
func (s *pointsSvc) CreateFieldIndex(_ context.Context, r *qdrantgo.CreateFieldIndexCollection) (*qdrantgo.PointsOperationResponse, error) {
	c, err := s.st.resolve(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	c.schema[r.GetFieldName()] = &qdrantgo.PayloadSchemaInfo{DataType: schemaTypes[r.GetFieldType()], Params: r.GetFieldIndexParams()}
	return done(), nil
}

// Upsert replaces points by id.
func (s *pointsSvc) Upsert(_ context.Context, r *qdrantgo.UpsertPoints) (*qdrantgo.PointsOperationResponse, error) {
	c, err := s.st.resolve(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	built := make([]*point, len(r.GetPoints()))
	for i, ps := range r.GetPoints() {
		if built[i], err = s.build(c, ps); err != nil {
			return nil, err
		}
	}
	for _, p := range built {
		c.points[key(p.id)] = p
	}
	return done(), nil
}

// build validates and converts one point (dims, names, inference).
func (s *pointsSvc) build(c *collection, ps *qdrantgo.PointStruct) (*point, error) {
	p := &point{id: ps.GetId(), payload: ps.GetPayload(), dense: map[string][]float32{}, sparse: map[string]map[uint32]float32{}}
	vecs := map[string]*qdrantgo.Vector{}
	if v := ps.GetVectors().GetVector(); v != nil {
		vecs[""] = v
	}
	for name, v := range ps.GetVectors().GetVectors().GetVectors() {
		vecs[name] = v
	}
	for name, v := range vecs {
		if err := s.setVector(c, p, name, v); err != nil {
			return nil, err
		}
	}
	if _, unnamed := c.vectorParams(""); unnamed && p.dense[""] == nil {
		return nil, invalid("Vector dimension error: missing default vector")
	}
	return p, nil
}

func (s *pointsSvc) setVector(c *collection, p *point, name string, v *qdrantgo.Vector) error {
	if doc := v.GetDocument(); doc != nil {
		return s.infer(c, p, name, doc)
	}
	if sp := v.GetSparse(); sp != nil {
		if _, ok := c.sparseParams(name); !ok {
			return invalid("Not existing vector name error: %s", name)
		}
		p.sparse[name] = sparseMap(sp.GetIndices(), sp.GetValues())
		return nil
	}
	data := v.GetDense().GetData()
	if len(data) == 0 {
		data = v.GetData()
	}
	vp, ok := c.vectorParams(name)
	if !ok {
		return invalid("Not existing vector name error: %s", name)
	}
	if len(data) != int(vp.GetSize()) {
		return invalid("Vector dimension error: expected dim: %d, got %d", vp.GetSize(), len(data))
	}
	if vp.GetDistance() == qdrantgo.Distance_Cosine {
		data = normalise(data) // Qdrant normalises cosine vectors on insert
	}
	p.dense[name] = data
	return nil
}

// infer turns a Document into a sparse vector with the local BM25 model.
func (s *pointsSvc) infer(c *collection, p *point, name string, doc *qdrantgo.Document) error {
	if doc.GetModel() != "qdrant/bm25" || !s.st.atLeast(bm25Since) {
		return invalid("InferenceService URL not configured - please provide valid address in config file")
	}
	if _, ok := c.sparseParams(name); !ok {
		return invalid("Not existing vector name error: %s", name)
	}
	p.sparse[name] = bm25Document(doc.GetText())
	return nil
}

func sparseMap(idx []uint32, vals []float32) map[uint32]float32 {
	m := make(map[uint32]float32, len(idx))
	for i, id := range idx {
		if i < len(vals) {
			m[id] = vals[i]
		}
	}
	return m
}

func normalise(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	n = math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// Get returns the points that exist among the ids.
func (s *pointsSvc) Get(_ context.Context, r *qdrantgo.GetPoints) (*qdrantgo.GetResponse, error) {
	c, err := s.st.resolve(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	out := &qdrantgo.GetResponse{}
	for _, id := range r.GetIds() {
		if p, ok := c.points[key(id)]; ok {
			rp := &qdrantgo.RetrievedPoint{Id: p.id}
			if r.GetWithPayload().GetEnable() {
				rp.Payload = p.payload
			}
			out.Result = append(out.Result, rp)
		}
	}
	return out, nil
}

// Delete removes points by id; missing ids are not an error.
func (s *pointsSvc) Delete(_ context.Context, r *qdrantgo.DeletePoints) (*qdrantgo.PointsOperationResponse, error) {
	c, err := s.st.resolve(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	if r.GetPoints().GetFilter() != nil {
		return nil, status.Error(codes.Unimplemented, "FAKE: delete by filter is not implemented")
	}
	for _, id := range r.GetPoints().GetPoints().GetIds() {
		delete(c.points, key(id))
	}
	return done(), nil
}
