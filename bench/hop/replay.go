package main

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"time"
)

// startReplay starts a test server that answers the OpenAI
// /v1/embeddings shape deterministically from vectors the real embedding
// server returned for the queries before the run (keyed by the query
// text, with and without the "query: " prefix). The sidecar's embedder
// points at it, so its dense rows measure the hop rather than the model;
// the "embed" row measures the real server on its own. It answers a
// base64 request ("encoding_format": "base64") in base64, as the real
// server does. An unknown text is an HTTP 404, which the run counts as
// an error.
func startReplay(texts []string, vecs [][]float32) (string, func(), error) {
	byText := make(map[string][]float32, 2*len(texts))
	for i, t := range texts {
		byText[t], byText["query: "+t] = vecs[i], vecs[i]
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input          []string `json:"input"`
			Model          string   `json:"model"`
			EncodingFormat string   `json:"encoding_format"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		out := struct {
			Object string `json:"object"`
			Data   []item `json:"data"`
			Model  string `json:"model"`
		}{Object: "list", Model: req.Model}
		for i, t := range req.Input {
			v, ok := byText[t]
			if !ok {
				http.Error(w, "text not recorded", http.StatusNotFound)
				return
			}
			var emb any = v
			if req.EncodingFormat == "base64" {
				raw := make([]byte, 4*len(v))
				for j, x := range v {
					binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(x))
				}
				emb = base64.StdEncoding.EncodeToString(raw)
			}
			out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: emb})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = hs.Close() }, nil
}

// embedCall is the proxy+embed baseline's embedding call (withEmbedCall):
// the replay server's /v1/embeddings URL, a space, and the request the
// sidecar's embedder sends for text as a query, with the same members.
func embedCall(replayURL string, f *flags, text string) (string, error) {
	type request struct {
		Model          string   `json:"model"`
		Input          []string `json:"input"`
		EncodingFormat string   `json:"encoding_format"`
		InputType      string   `json:"input_type,omitempty"`
	}
	r := request{Model: f.model, Input: []string{"query: " + text}, EncodingFormat: "base64"}
	if f.inputType {
		r.Input[0], r.InputType = text, "query"
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return replayURL + "/v1/embeddings " + string(b), nil
}
