package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
)

// Qdrant speaks gRPC, and so do its direct and proxy paths: the official
// Go client, configured as the adapter configures it (one connection, no
// keep-alive pings), sends each query's QueryPoints to the engine or to
// the bare proxy, which forwards HTTP/2 over cleartext (h2c) unchanged.
//
// The collection is the one bench/scifact/beir's Qdrant kit loads: the
// corpus upserted through the adapter's Writer, a sparse vector "bm25"
// filled by qdrant/bm25 Document inference and, for dense, an unnamed
// cosine vector.
const (
	qdrantSparseVector = "bm25"
	qdrantBM25         = "qdrant/bm25"
	// qdrantIDKey is the payload key in which the adapter's Writer keeps
	// the document id (point ids are UUIDv5 of it).
	qdrantIDKey = "_rcp_id"
	// qdrantTimeout is the server-side timeout in seconds the adapter
	// sends with every query (its default, which the sidecar's
	// configuration here keeps).
	qdrantTimeout = 30
)

// qdrantNative holds one client per path.
type qdrantNative struct {
	collection string
	clients    map[string]*qdrantgo.Client
}

// newQdrantNative connects to the engine at engineAddr and the proxy at
// proxyAddr (both host:port).
func newQdrantNative(collection, engineAddr, proxyAddr string) (*qdrantNative, error) {
	q := &qdrantNative{collection: collection, clients: map[string]*qdrantgo.Client{}}
	for path, addr := range map[string]string{pathDirect: engineAddr, pathProxy: proxyAddr} {
		c, err := qdrantConnect(addr)
		if err != nil {
			q.close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		q.clients[path] = c
	}
	return q, nil
}

// qdrantConnect opens a client as the adapter does.
func qdrantConnect(addr string) (*qdrantgo.Client, error) {
	host, ps, err := net.SplitHostPort(strings.TrimPrefix(addr, "http://"))
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return nil, fmt.Errorf("port of %q: %w", addr, err)
	}
	return qdrantgo.NewClient(&qdrantgo.Config{Host: host, Port: port, SkipCompatibilityCheck: true, PoolSize: 1, KeepAliveTime: -1})
}

// qdrantRequest is the QueryPoints the adapter sends for a plain retrieve
// of k hits: k+1 points (the Engine looks one ahead for its next page),
// the whole payload (the text is returned by default), its default
// timeout, and nearest to a qdrant/bm25 Document on the sparse vector
// (sparse) or to the query embedding on the unnamed vector (dense). It is
// written out here, not taken from the adapter, so that the identity check
// does not share code with what it checks.
func qdrantRequest(collection, mode, text string, vec []float32, k int) *qdrantgo.QueryPoints {
	limit, timeout := uint64(k+1), uint64(qdrantTimeout)
	qp := &qdrantgo.QueryPoints{CollectionName: collection, Limit: &limit, Timeout: &timeout,
		WithPayload: qdrantgo.NewWithPayloadEnable(true)}
	if mode == "sparse" {
		using := qdrantSparseVector
		qp.Using = &using
		qp.Query = qdrantgo.NewQueryNearest(qdrantgo.NewVectorInputDocument(&qdrantgo.Document{Text: text, Model: qdrantBM25}))
	} else {
		qp.Query = qdrantgo.NewQueryDense(vec)
	}
	return qp
}

func (q *qdrantNative) requests(mode string, k int, queries []beir.Query, vecs [][]float32) (nativeCall, error) {
	reqs := make([]*qdrantgo.QueryPoints, len(queries))
	for i, qu := range queries {
		var v []float32
		if mode == "dense" {
			v = vecs[i]
		}
		reqs[i] = qdrantRequest(q.collection, mode, qu.Text, v, k)
	}
	return func(ctx context.Context, path string, i int, ids bool) ([]string, error) {
		c, ok := q.clients[path]
		if !ok {
			return nil, fmt.Errorf("qdrant: no client for path %q", path)
		}
		points, err := c.Query(ctx, reqs[i%len(reqs)])
		if err != nil {
			return nil, err
		}
		if !ids {
			return nil, nil
		}
		return qdrantIDs(points)
	}, nil
}

// qdrantIDs reads the document ids of points, in order, from the payload
// key the adapter's Writer stores them in.
func qdrantIDs(points []*qdrantgo.ScoredPoint) ([]string, error) {
	ids := make([]string, len(points))
	for i, p := range points {
		id := p.GetPayload()[qdrantIDKey].GetStringValue()
		if id == "" {
			return nil, errors.New("qdrant: point without " + qdrantIDKey + " in its payload")
		}
		ids[i] = id
	}
	return ids, nil
}

func (q *qdrantNative) close() {
	for _, c := range q.clients {
		_ = c.Close()
	}
}

// dropQdrant deletes the benchmark's collection.
func dropQdrant(ctx context.Context, addr, collection string) error {
	c, err := qdrantConnect(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.DeleteCollection(ctx, collection)
}
