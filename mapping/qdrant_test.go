package mapping

import (
	"reflect"
	"testing"
)

// TestReadQdrantVectorParams covers the vector parameters the recorded
// collections do not show (the test front takes only size and distance):
// named vectors with a datatype, a multivector whose comparator is the
// enum's zero value (left out of proto3 JSON), quantisation of the vector
// or of the collection, and an enum number the reader's schema does not
// know. The input is written in CollectionInfo's proto3 JSON form.
func TestReadQdrantVectorParams(t *testing.T) {
	raw := `{"config":{"params":{"vectorsConfig":{"paramsMap":{"map":{
	  "u8":{"size":"16","distance":"Dot","datatype":"Uint8","quantizationConfig":{"binary":{}}},
	  "multi":{"size":"4","distance":"Cosine","multivectorConfig":{}},
	  "odd":{"size":"4","distance":9}}}},
	  "sparseVectorsConfig":{"map":{"s":{}}}},
	  "quantizationConfig":{"scalar":{"type":"Int8"}}},
	 "payloadSchema":{"k":{"dataType":"Keyword"},"x":{"dataType":42},"a[0].b":{"dataType":"Integer"}}}`
	m, err := ReadQdrant("c", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	ix := m.Indices[0]
	want := []Field{
		{Path: "multi", Type: "dense_vector", Vector: &Vector{Dims: 4, Similarity: "Cosine", Quantization: "scalar", Multivector: "MaxSim"}},
		{Path: "odd", Type: "dense_vector", Vector: &Vector{Dims: 4, Similarity: "9", Quantization: "scalar"}},
		{Path: "u8", Type: "dense_vector", Vector: &Vector{Dims: 16, Similarity: "Dot", Element: "Uint8", Quantization: "binary"}},
		{Path: "s", Type: "sparse_vector", Vector: &Vector{}},
	}
	if !reflect.DeepEqual(ix.Vectors, want) {
		t.Errorf("vectors:\n got %+v\nwant %+v", ix.Vectors, want)
	}
	wantFields := []Field{
		{Path: "a[0].b", Type: "integer", Problem: `path "a[0].b" is not a dotted name`},
		{Path: "k", Type: "keyword"},
		{Path: "x", Type: "42"},
	}
	if !reflect.DeepEqual(ix.Fields, wantFields) {
		t.Errorf("fields:\n got %+v\nwant %+v", ix.Fields, wantFields)
	}
}

// TestReadSettings reads the settings a mapping's semantics depend on,
// from a full and from a filtered _settings body.
func TestReadSettings(t *testing.T) {
	got, err := ReadSettings([]byte(`{"b":{"settings":{"index":{"number_of_replicas":"0"}}},
	  "a":{"settings":{"index":{"knn":"true","number_of_shards":"1","number_of_replicas":"1","other":"x"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Settings{{Name: "a", KNN: "true", Shards: "1", Replicas: "1"}, {Name: "b", Replicas: "0"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := ReadSettings([]byte(`{"a":`)); err == nil {
		t.Error("truncated settings read")
	}
}
