package deploy

import (
	"debug/buildinfo"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sbomTools are cyclonedx-gomod and the CycloneDX JSON schemas, installed
// by integration/sbom/setup.sh (integration/.work/sbom.env).
func sbomTools(t *testing.T) (tool, schemas string) {
	t.Helper()
	tool, schemas = os.Getenv("RCP_CYCLONEDX_GOMOD"), os.Getenv("RCP_CYCLONEDX_SCHEMAS")
	if tool == "" || schemas == "" {
		const msg = "RCP_CYCLONEDX_GOMOD and RCP_CYCLONEDX_SCHEMAS are not set: run integration/sbom/setup.sh and source integration/.work/sbom.env"
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return tool, schemas
}

// cdxBOM is the part of a CycloneDX BOM the test reads.
type cdxBOM struct {
	BOMFormat   string `json:"bomFormat"`
	SpecVersion string `json:"specVersion"`
	Metadata    struct {
		Component cdxComponent `json:"component"`
	} `json:"metadata"`
	Components []cdxComponent `json:"components"`
}

type cdxComponent struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	PURL    string `json:"purl"`
}

// TestSBOM generates the CycloneDX SBOM of the binary the Dockerfile
// builds, validates it against the CycloneDX 1.6 JSON schema, and checks
// its components against the module list the Go toolchain embedded in
// that binary (debug/buildinfo): every linked module is listed with its
// version and package URL, nothing else is, and no test-only dependency
// appears.
func TestSBOM(t *testing.T) {
	tool, schemas := sbomTools(t)
	bin := dockerBuild(t, runtime.GOARCH)
	out := filepath.Join(t.TempDir(), "rcp-sidecar.cdx.json")
	run(t, nil, tool, "bin", "-json", "-noserial", "-output-version", "1.6", "-version", "v"+stampedVersion, "-output", out, bin)
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	validateCycloneDX(t, schemas, raw)
	var bom cdxBOM
	if err := json.Unmarshal(raw, &bom); err != nil {
		t.Fatal(err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion != "1.6" {
		t.Errorf("bomFormat %q specVersion %q, want CycloneDX 1.6", bom.BOMFormat, bom.SpecVersion)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if got := bom.Metadata.Component.Name; got != info.Main.Path {
		t.Errorf("SBOM describes %q, want the main module %s", got, info.Main.Path)
	}
	listed := map[string]cdxComponent{}
	for _, c := range bom.Components {
		listed[c.Name] = c
	}
	want := map[string]bool{}
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		want[d.Path] = true
		c, ok := listed[d.Path]
		switch {
		case !ok:
			t.Errorf("linked module %s@%s is not in the SBOM", d.Path, d.Version)
		case c.Version != d.Version:
			t.Errorf("%s: SBOM version %s, binary has %s", d.Path, c.Version, d.Version)
		case !strings.HasPrefix(c.PURL, "pkg:golang/") || !strings.Contains(c.PURL, "@"+d.Version):
			t.Errorf("%s: purl %q, want pkg:golang/...@%s", d.Path, c.PURL, d.Version)
		}
	}
	for name := range listed {
		if !want[name] {
			t.Errorf("SBOM lists %s, which the binary does not link", name)
		}
	}
	for _, testOnly := range []string{"github.com/google/go-cmp", "github.com/santhosh-tekuri/jsonschema/v6",
		"github.com/VictoriaMetrics/metricsql", "golang.org/x/tools"} {
		if _, ok := listed[testOnly]; ok {
			t.Errorf("test-only module %s is in the shipped binary's SBOM", testOnly)
		}
	}
	if len(info.Deps) < 10 {
		t.Errorf("the binary embeds only %d modules; the build info looks wrong", len(info.Deps))
	}
}

// validateCycloneDX validates raw against bom-1.6.schema.json, with the
// schemas it refers to (SPDX license ids, JSF signatures, which the
// library ships as jsf-0.82.schemax.json) loaded from the
// same directory under their $id, so nothing is fetched.
func validateCycloneDX(t *testing.T, dir string, raw []byte) {
	t.Helper()
	c := jsonschema.NewCompiler()
	main := ""
	for _, name := range []string{"bom-1.6.schema.json", "spdx.schema.json", "jsf-0.82.schemax.json"} {
		f := filepath.Join(dir, name)
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if id == "" {
			t.Fatalf("%s has no $id", f)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if filepath.Base(f) == "bom-1.6.schema.json" {
			main = id
		}
	}
	if main == "" {
		t.Fatalf("no bom-1.6.schema.json with an $id in %s", dir)
	}
	sch, err := c.Compile(main)
	if err != nil {
		t.Fatalf("compile %s: %v", main, err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("SBOM is not valid CycloneDX 1.6: %v", err)
	}
}
