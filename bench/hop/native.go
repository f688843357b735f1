package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/rcp-sidecar/rcp-sidecar/bench/scifact/beir"
)

// native is an engine's own protocol on the direct and proxy paths: the
// request the adapter sends for each query of a cell, sent to either path.
type native interface {
	// requests builds the native requests of one cell, one per query
	// (vecs holds the query embeddings for dense).
	requests(mode string, k int, queries []beir.Query, vecs [][]float32) (nativeCall, error)
	// close releases the clients.
	close()
}

// nativeCall sends query i's request on path (pathDirect or pathProxy)
// and, when ids is set, returns the hit ids in order. Any answer other
// than a success is an error.
type nativeCall func(ctx context.Context, path string, i int, ids bool) ([]string, error)

// httpNative is the JSON _search of Elasticsearch and OpenSearch over
// HTTP/1.1: bodies from the engine's kit in bench/scifact/beir, posted to
// <base>/<index>/_search on the engine (direct) or the bare proxy.
type httpNative struct {
	eng   string
	kit   beir.Kit
	hc    *http.Client
	urls  map[string]string // path → .../<index>/_search
	dense bool              // the index holds vectors (they are excluded from _source)
}

func (h *httpNative) requests(mode string, k int, queries []beir.Query, vecs [][]float32) (nativeCall, error) {
	bodies := make([][]byte, len(queries))
	for i, q := range queries {
		var body any
		if mode == "sparse" {
			body = h.kit.SparseBody(q.Text, k, h.dense)
		} else {
			// The Engine asks the adapter for k+1 (to know whether a
			// next page exists); the kNN result depends on k and
			// num_candidates, so the direct body asks for the same.
			body = h.kit.DenseBody(vecs[i], k+1, k+1, true)
			if h.eng == "elasticsearch" {
				// Elasticsearch 8.19 quantises dense_vector (int8_hnsw)
				// by default, and the adapter then asks for a rescore
				// with the original vectors, oversampling
				// num_candidates/k (here 1).
				body.(map[string]any)["knn"].(map[string]any)["rescore_vector"] = map[string]any{"oversample": 1.0}
			}
		}
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		bodies[i] = b
	}
	return func(ctx context.Context, path string, i int, ids bool) ([]string, error) {
		data, status, err := post(ctx, h.hc, h.urls[path], bodies[i%len(bodies)], nil)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("HTTP %d: %.200s", status, data)
		}
		if !ids {
			return nil, nil
		}
		return hitIDs(data, false)
	}, nil
}

func (h *httpNative) close() {}
