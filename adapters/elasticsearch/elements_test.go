package elasticsearch

import (
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
)

// TestVectorFieldElements: float and byte dense_vector fields are offered
// with their element type (capability.DenseField matches it to the
// embedder's); bit fields are left out with a note saying why.
func TestVectorFieldElements(t *testing.T) {
	fields := map[string]field{
		"f":    {Type: "dense_vector", Indexed: true, Dims: 4, Similarity: "cosine", Element: "float"},
		"b":    {Type: "dense_vector", Indexed: true, Dims: 4, Similarity: "dot_product", Element: "byte"},
		"bits": {Type: "dense_vector", Indexed: true, Dims: 32, Similarity: "l2_norm", Element: "bit"},
	}
	st := &probeState{vectors: map[string]field{}, vindex: map[string]vectorIndex{}}
	ev := &capability.Evidence{}
	got := (&adapter{cfg: DefaultConfig()}).vectorFields(fields, st, ev)
	var names []string
	for _, vf := range got {
		names = append(names, vf.Name+":"+string(vf.Element))
	}
	if want := []string{"b:" + string(capability.ElementInt8), "f:" + string(capability.ElementFloat)}; !slices.Equal(names, want) {
		t.Errorf("offered %v, want %v", names, want)
	}
	if len(ev.Notes) != 1 || !strings.Contains(ev.Notes[0], "bits") || !strings.Contains(ev.Notes[0], "element_type bit needs binary") {
		t.Errorf("notes %q, want one saying why the bit field is left out", ev.Notes)
	}
}

// TestSourceVectorField: a document's vector goes to the field the Engine
// names (the dense field), else to the first vector field.
func TestSourceVectorField(t *testing.T) {
	st := &probeState{ev: &capability.Evidence{VectorFields: []capability.VectorField{{Name: "a"}, {Name: "b"}}}}
	a := &adapter{cfg: DefaultConfig()}
	named := a.source(st, adapters.Document{ID: "1", Vector: []float32{1}, VectorField: "b"})
	first := a.source(st, adapters.Document{ID: "2", Vector: []float32{1}})
	if _, ok := named["b"]; !ok || named["a"] != nil {
		t.Errorf("named field: source %v, want the vector in b", named)
	}
	if _, ok := first["a"]; !ok {
		t.Errorf("no field named: source %v, want the vector in a", first)
	}
}
