package elasticsearch

import (
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/mapping"
)

func TestUnusedAndDefaults(t *testing.T) {
	raw := `{"ix":{"mappings":{"properties":{"s":{"type":"semantic_text","inference_id":"e5"},"sv":{"type":"sparse_vector"},
	"b":{"type":"dense_vector","dims":16,"element_type":"bit"},"v":{"type":"dense_vector","dims":3}}}}}`
	m, err := mapping.Read([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	per, _ := perIndex(m)
	out := per["ix"]
	got := strings.Join(unusedFieldNotes(out), "|")
	if !strings.Contains(got, "semantic_text field s") || !strings.Contains(got, "sparse_vector field sv") {
		t.Errorf("notes %q", got)
	}
	if out["b"].Similarity != "l2_norm" || out["v"].Similarity != "cosine" || out["v"].Element != "float" {
		t.Errorf("defaults: %+v %+v", out["b"], out["v"])
	}
}

func TestMergeConflicts(t *testing.T) {
	per := map[string]map[string]field{
		"a": {"x": {Name: "x", Type: "keyword", Indexed: true}, "y": {Name: "y", Type: "long", Indexed: true}},
		"b": {"x": {Name: "x", Type: "text", Indexed: true}, "y": {Name: "y", Type: "long", Indexed: true}},
	}
	merged, notes := mergeFields(per)
	if _, ok := merged["x"]; ok || len(notes) != 1 || !strings.Contains(notes[0], "keyword in [a]; text in [b]") {
		t.Errorf("merged %v notes %q", merged, notes)
	}
	if _, ok := merged["y"]; !ok {
		t.Error("agreeing field dropped")
	}
}
