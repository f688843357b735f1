package main

import (
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// TestVectorFieldsText: the probe's text report says when a vector field
// is quantised and whether its scores are rescored or approximate.
func TestVectorFieldsText(t *testing.T) {
	tests := []struct {
		name string
		vf   capability.VectorField
		want string
	}{
		{"exact", capability.VectorField{Name: "v", Dims: 4, Similarity: capability.SimCosine, Indexed: true,
			Detail: map[string]string{"scores": "exact"}}, "v(4,cosine,indexed=true)"},
		{"rescored", capability.VectorField{Name: "v", Dims: 4, Similarity: capability.SimCosine, Indexed: true,
			Detail: map[string]string{"quantisation": "int8_hnsw", "scores": "rescored"}}, "v(4,cosine,indexed=true,quantised=int8_hnsw,rescored)"},
		{"approximate", capability.VectorField{Name: "v", Dims: 4, Similarity: capability.SimL2, Indexed: true, ApproxScores: true,
			Detail: map[string]string{"quantisation": "faiss encoder sq fp16", "scores": "approximate"}},
			"v(4,l2,indexed=true,quantised=faiss encoder sq fp16,approximate scores)"},
		{"int8", capability.VectorField{Name: "v", Dims: 4, Similarity: capability.SimDot, Element: capability.ElementInt8, Indexed: true,
			Detail: map[string]string{"scores": "exact"}}, "v(4,dot,int8,indexed=true)"},
		{"approximate without detail", capability.VectorField{Name: "v", Dims: 4, Similarity: capability.SimDot, ApproxScores: true},
			"v(4,dot,indexed=false,approximate scores)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := vectorFields([]capability.VectorField{tc.vf}); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestProbeFilterFields: the probe's filter line names each float field's
// stored precision beside its type.
func TestProbeFilterFields(t *testing.T) {
	got := filterFields([]capability.FilterField{
		{Name: "h", Type: filterlang.TypeFloat, Precision: rcp.FieldPrecision{Stored: rcp.PrecisionHalfFloat}},
		{Name: "p", Type: filterlang.TypeFloat, Precision: rcp.FieldPrecision{Stored: rcp.PrecisionScaledFloat, ScalingFactor: 100}},
		{Name: "y", Type: filterlang.TypeInt},
	})
	if want := "h:float(half_float), p:float(scaled_float(scaling_factor=100)), y:int"; got != want {
		t.Errorf("filter fields %q, want %q", got, want)
	}
}
