package qdranttest

import (
	"context"
	"sort"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// collection is one FAKE collection.
type collection struct {
	name   string
	params *qdrantgo.CollectionParams
	strict *qdrantgo.StrictModeConfig
	schema map[string]*qdrantgo.PayloadSchemaInfo
	points map[string]*point
}

// point is one stored point.
type point struct {
	id      *qdrantgo.PointId
	payload map[string]*qdrantgo.Value
	dense   map[string][]float32
	sparse  map[string]map[uint32]float32
}

// key is a point id's map key.
func key(id *qdrantgo.PointId) string {
	if u := id.GetUuid(); u != "" {
		return "u:" + u
	}
	return "n:" + qdrantgo.NewIDNum(id.GetNum()).String()
}

// sortedPoints returns the points in id order (deterministic scans).
func (c *collection) sortedPoints() []*point {
	keys := make([]string, 0, len(c.points))
	for k := range c.points {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*point, len(keys))
	for i, k := range keys {
		out[i] = c.points[k]
	}
	return out
}

// vectorParams returns the dense params of vector name ("" unnamed).
func (c *collection) vectorParams(name string) (*qdrantgo.VectorParams, bool) {
	vc := c.params.GetVectorsConfig()
	if p := vc.GetParams(); p != nil {
		return p, name == ""
	}
	p, ok := vc.GetParamsMap().GetMap()[name]
	return p, ok
}

func (c *collection) sparseParams(name string) (*qdrantgo.SparseVectorParams, bool) {
	p, ok := c.params.GetSparseVectorsConfig().GetMap()[name]
	return p, ok
}

// collectionsSvc is the FAKE qdrant.Collections service.
type collectionsSvc struct {
	qdrantgo.UnimplementedCollectionsServer
	st *state
}

// Create stores a collection's vector and strict-mode configuration.
func (s *collectionsSvc) Create(_ context.Context, r *qdrantgo.CreateCollection) (*qdrantgo.CollectionOperationResponse, error) {
	if _, ok := s.st.collections[r.GetCollectionName()]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "Wrong input: Collection `%s` already exists!", r.GetCollectionName())
	}
	s.st.collections[r.GetCollectionName()] = &collection{name: r.GetCollectionName(),
		params: &qdrantgo.CollectionParams{VectorsConfig: r.GetVectorsConfig(), SparseVectorsConfig: r.GetSparseVectorsConfig()},
		strict: r.GetStrictModeConfig(), schema: map[string]*qdrantgo.PayloadSchemaInfo{}, points: map[string]*point{}}
	return &qdrantgo.CollectionOperationResponse{Result: true}, nil
}

// Delete drops a collection.
func (s *collectionsSvc) Delete(_ context.Context, r *qdrantgo.DeleteCollection) (*qdrantgo.CollectionOperationResponse, error) {
	_, ok := s.st.collections[r.GetCollectionName()]
	delete(s.st.collections, r.GetCollectionName())
	return &qdrantgo.CollectionOperationResponse{Result: ok}, nil
}

// Get returns collection info (config, payload schema, points count).
func (s *collectionsSvc) Get(_ context.Context, r *qdrantgo.GetCollectionInfoRequest) (*qdrantgo.GetCollectionInfoResponse, error) {
	c, err := s.st.resolve(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	n := uint64(len(c.points))
	info := &qdrantgo.CollectionInfo{Status: qdrantgo.CollectionStatus_Green, PointsCount: &n, PayloadSchema: c.schema,
		Config: &qdrantgo.CollectionConfig{Params: c.params, StrictModeConfig: c.strict}}
	return &qdrantgo.GetCollectionInfoResponse{Result: info}, nil
}

// List names the collections.
func (s *collectionsSvc) List(context.Context, *qdrantgo.ListCollectionsRequest) (*qdrantgo.ListCollectionsResponse, error) {
	out := &qdrantgo.ListCollectionsResponse{}
	for name := range s.st.collections {
		out.Collections = append(out.Collections, &qdrantgo.CollectionDescription{Name: name})
	}
	return out, nil
}

// UpdateAliases applies create and delete alias actions.
func (s *collectionsSvc) UpdateAliases(_ context.Context, r *qdrantgo.ChangeAliases) (*qdrantgo.CollectionOperationResponse, error) {
	for _, a := range r.GetActions() {
		if c := a.GetCreateAlias(); c != nil {
			if _, ok := s.st.collections[c.GetCollectionName()]; !ok {
				return nil, status.Errorf(codes.NotFound, "Not found: Collection `%s` doesn't exist!", c.GetCollectionName())
			}
			s.st.aliases[c.GetAliasName()] = c.GetCollectionName()
		}
		if d := a.GetDeleteAlias(); d != nil {
			delete(s.st.aliases, d.GetAliasName())
		}
	}
	return &qdrantgo.CollectionOperationResponse{Result: true}, nil
}

// ListAliases lists every alias.
func (s *collectionsSvc) ListAliases(context.Context, *qdrantgo.ListAliasesRequest) (*qdrantgo.ListAliasesResponse, error) {
	out := &qdrantgo.ListAliasesResponse{}
	for a, c := range s.st.aliases {
		out.Aliases = append(out.Aliases, &qdrantgo.AliasDescription{AliasName: a, CollectionName: c})
	}
	return out, nil
}

// CollectionExists reports whether a collection exists.
func (s *collectionsSvc) CollectionExists(_ context.Context, r *qdrantgo.CollectionExistsRequest) (*qdrantgo.CollectionExistsResponse, error) {
	_, ok := s.st.collections[r.GetCollectionName()]
	return &qdrantgo.CollectionExistsResponse{Result: &qdrantgo.CollectionExists{Exists: ok}}, nil
}

// schemaTypes maps index field types to payload schema types.
var schemaTypes = map[qdrantgo.FieldType]qdrantgo.PayloadSchemaType{
	qdrantgo.FieldType_FieldTypeKeyword:  qdrantgo.PayloadSchemaType_Keyword,
	qdrantgo.FieldType_FieldTypeInteger:  qdrantgo.PayloadSchemaType_Integer,
	qdrantgo.FieldType_FieldTypeFloat:    qdrantgo.PayloadSchemaType_Float,
	qdrantgo.FieldType_FieldTypeGeo:      qdrantgo.PayloadSchemaType_Geo,
	qdrantgo.FieldType_FieldTypeText:     qdrantgo.PayloadSchemaType_Text,
	qdrantgo.FieldType_FieldTypeBool:     qdrantgo.PayloadSchemaType_Bool,
	qdrantgo.FieldType_FieldTypeDatetime: qdrantgo.PayloadSchemaType_Datetime,
	qdrantgo.FieldType_FieldTypeUuid:     qdrantgo.PayloadSchemaType_Uuid,
}
