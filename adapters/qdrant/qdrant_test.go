package qdrant_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/qdrant"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/adaptertest"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
)

// addrEnv is the gRPC endpoint (host:port) of Qdrant's engine: the front
// over Qdrant Edge that integration/qdrant/start.sh runs, or a Qdrant
// server.
const addrEnv = "RCP_QDRANT_ADDR"

var seq atomic.Int64

// harness builds collections on Qdrant's engine at RCP_QDRANT_ADDR
// through go-client like any client.
type harness struct {
	addr    string
	client  *qdrantgo.Client
	created []string
}

func newHarness(_ context.Context, t testing.TB) (adaptertest.Harness, error) {
	h := &harness{addr: liveAddr(t)}
	host, port, err := net.SplitHostPort(h.addr)
	if err != nil {
		return nil, err
	}
	var p int
	fmt.Sscan(port, &p)
	h.client, err = qdrantgo.NewClient(&qdrantgo.Config{Host: host, Port: p, SkipCompatibilityCheck: true, PoolSize: 1})
	return h, err
}

// MakeAdapter creates a collection from s (named dense vector, BM25 sparse
// vector with IDF, one payload index per field), opens the adapter on it
// and loads the corpus through the adapter's own Upsert.
func (h *harness) MakeAdapter(ctx context.Context, s adaptertest.Schema) (adapters.Adapter, error) {
	name := fmt.Sprintf("rcp_conformance_%d_%d", os.Getpid(), seq.Add(1))
	if err := createCollection(ctx, h.client, name, s); err != nil {
		return nil, err
	}
	h.created = append(h.created, name)
	cfg := qdrant.DefaultConfig()
	cfg.Address, cfg.Collection, cfg.Vector = h.addr, name, s.Vector.Name
	cfg.SparseVector, cfg.SparseModel, cfg.TitleField, cfg.Writable = "bm25", qdrant.ModelBM25, s.TitleField, true
	a, err := qdrant.Factory.Open(ctx, cfg, adapters.Deps{})
	if err != nil {
		return nil, err
	}
	if _, err := a.Probe(ctx); err != nil {
		return nil, err
	}
	if err := a.(adapters.Writer).Upsert(ctx, s.Documents()); err != nil {
		return nil, err
	}
	return a, nil
}

var distances = map[capability.Similarity]qdrantgo.Distance{
	capability.SimCosine: qdrantgo.Distance_Cosine, capability.SimDot: qdrantgo.Distance_Dot,
	capability.SimL2: qdrantgo.Distance_Euclid, capability.SimManhattan: qdrantgo.Distance_Manhattan,
}

var fieldTypes = map[filterlang.FieldType]qdrantgo.FieldType{
	filterlang.TypeKeyword: qdrantgo.FieldType_FieldTypeKeyword, filterlang.TypeInt: qdrantgo.FieldType_FieldTypeInteger,
	filterlang.TypeFloat: qdrantgo.FieldType_FieldTypeFloat, filterlang.TypeBool: qdrantgo.FieldType_FieldTypeBool,
	filterlang.TypeDate: qdrantgo.FieldType_FieldTypeDatetime, filterlang.TypeText: qdrantgo.FieldType_FieldTypeText,
	filterlang.TypeGeo: qdrantgo.FieldType_FieldTypeGeo,
}

func createCollection(ctx context.Context, c *qdrantgo.Client, name string, s adaptertest.Schema) error {
	idf := qdrantgo.Modifier_Idf
	err := c.CreateCollection(ctx, &qdrantgo.CreateCollection{CollectionName: name,
		VectorsConfig: qdrantgo.NewVectorsConfigMap(map[string]*qdrantgo.VectorParams{
			s.Vector.Name: {Size: uint64(s.Vector.Dims), Distance: distances[s.Vector.Similarity]}}),
		SparseVectorsConfig: qdrantgo.NewSparseVectorsConfig(map[string]*qdrantgo.SparseVectorParams{"bm25": {Modifier: &idf}})})
	if err != nil {
		return err
	}
	wait := true
	for _, f := range s.Fields {
		ft := fieldTypes[f.Type]
		if _, err := c.CreateFieldIndex(ctx, &qdrantgo.CreateFieldIndexCollection{CollectionName: name, FieldName: f.Name, FieldType: &ft, Wait: &wait}); err != nil {
			return err
		}
	}
	return nil
}

// Unreachable opens an adapter on a port nobody listens on.
func (h *harness) Unreachable(ctx context.Context) (adapters.Adapter, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := lis.Addr().String()
	lis.Close()
	cfg := qdrant.DefaultConfig()
	cfg.Address, cfg.Collection = addr, "absent"
	return qdrant.Factory.Open(ctx, cfg, adapters.Deps{})
}

// Close drops the collections.
func (h *harness) Close() {
	ctx := context.Background()
	for _, name := range h.created {
		_ = h.client.DeleteCollection(ctx, name)
	}
	h.client.Close()
}

// TestConformance runs the adapter conformance suite against Qdrant's
// engine (RCP_QDRANT_ADDR).
func TestConformance(t *testing.T) {
	liveAddr(t)
	adaptertest.RunConformanceTests(t, newHarness)
}

// BenchmarkConformance measures sidecar overhead per retrieve against the
// engine at RCP_QDRANT_ADDR.
func BenchmarkConformance(b *testing.B) {
	adaptertest.RunBenchmarks(b, newHarness)
}
