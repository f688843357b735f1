package opensearch

import (
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
)

// TestVectorFieldElements: float and byte knn_vector fields are offered
// with their element type (capability.DenseField matches it to the
// embedder's); binary fields are left out with a note saying why.
func TestVectorFieldElements(t *testing.T) {
	f := &fields{vectors: map[string]vectorInfo{
		"f":    {Dims: 4, Space: "cosinesimil", Engine: "lucene", Method: "hnsw", DataType: "float"},
		"b":    {Dims: 4, Space: "innerproduct", Engine: "lucene", Method: "hnsw", DataType: "byte"},
		"bits": {Dims: 32, Space: "hamming", Engine: "faiss", Method: "hnsw", DataType: "binary"},
	}}
	got, notes, err := vectorFields(testConfig(), f, true)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, vf := range got {
		names = append(names, vf.Name+":"+string(vf.Element))
	}
	if want := []string{"b:" + string(capability.ElementInt8), "f:" + string(capability.ElementFloat)}; !slices.Equal(names, want) {
		t.Errorf("offered %v, want %v", names, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `"bits"`) || !strings.Contains(notes[0], "data_type binary needs binary") {
		t.Errorf("notes %q, want one saying why the binary field is left out", notes)
	}
}
