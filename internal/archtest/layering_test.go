package archtest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path"
	"strings"
	"testing"
)

const module = "github.com/rcp-sidecar/rcp-sidecar"

// pkg is the subset of `go list -json` output the rules need.
type pkg struct {
	ImportPath   string
	Name         string
	Dir          string
	GoFiles      []string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// rel returns p relative to the module ("" for the root), or p itself
// when p is outside the module.
func rel(p string) string {
	if p == module {
		return ""
	}
	return strings.TrimPrefix(p, module+"/")
}

func inModule(p string) bool { return p == module || strings.HasPrefix(p, module+"/") }

// isStd reports whether p is a standard-library import path (no dot in
// its first element).
func isStd(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".") && !inModule(p)
}

// listPackages runs `go list -e -json ./...` from the module root.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == "/dev/null" {
		t.Fatal("not inside the module")
	}
	return strings.TrimSuffix(gomod, "/go.mod")
}

// allowed reports whether import imp matches one allow entry: "std", a
// module-relative package (exact), "dir/*" for every module package one
// level under dir, or an external path prefix.
func allowed(imp string, allow []string) bool {
	for _, a := range allow {
		dir, children := strings.CutSuffix(a, "/*")
		switch {
		case a == "std" && isStd(imp):
			return true
		case inModule(imp) && rel(imp) == a:
			return true
		case inModule(imp) && children && path.Dir(rel(imp)) == dir:
			return true
		case !inModule(imp) && strings.Contains(a, ".") && strings.HasPrefix(imp, a):
			return true
		}
	}
	return false
}

// layers lists, per module package, everything its non-test code may
// import directly (docs/ARCHITECTURE.md §2.2). Every module package must appear:
// TestLayering fails on a package missing here, so a new package starts
// by stating its layer. An empty list is a package with no non-test
// imports (documentation and test-only packages).
var layers = map[string][]string{
	// The wire protocol and the pure packages: the standard library only.
	"rcp/internal/jsonscan": {"std"},
	"rcp/jsonrpc":           {"std", "rcp/internal/jsonscan"},
	"rcp":                   {"std", "rcp/jsonrpc", "rcp/internal/jsonscan"},
	"filterlang":            {"std", "rcp"},
	"rankmath":              {"std", "rcp"},
	"capability":            {"std", "rcp", "filterlang"},
	"rcp/server":            {"std", "rcp", "rcp/jsonrpc", "rcp/internal/jsonscan", "go.opentelemetry.io/"},
	"rcp/schema":            {"std"},
	"rcp/rcptest":           {"std", "rcp", "rcp/jsonrpc", "rcp/schema", "rcp/server", "github.com/santhosh-tekuri/jsonschema/"},

	// mapping reads an engine's index mapping from bytes into one model;
	// it calls no engine (TestPureMappingReader).
	"mapping": {"std"},

	// adapters is the contract only: it names no pipeline, server or tracer.
	"adapters": {"std", "rcp", "capability", "filterlang"},
	// retrieval is the portable pipeline over the adapters contract; it
	// does not know the server that serves it nor any engine.
	"retrieval": {"std", "adapters", "capability", "filterlang", "rankmath", "rcp", "go.opentelemetry.io/"},

	// Engines implement the contract and never import the pipeline.
	"adapters/internal/dsl": {"std", "rcp"},
	// Seeded _search replies for the differential tests of their readers.
	"adapters/internal/dsl/dsltest": {"std", "adapters", "rcp", "rcp/rcptest"},
	"adapters/internal/dslfilter":   {"std", "adapters/internal/dsl", "filterlang", "rcp", "capability", "mapping"},
	// Index-isolation bookkeeping the Elasticsearch-family adapters share.
	"adapters/internal/tenantidx": {"std", "adapters", "mapping", "rcp"},
	// Error classification steps the Elasticsearch-family adapters share.
	"adapters/internal/eserrors": {"std", "adapters/internal/dsl", "rcp"},
	// The settings the Elasticsearch-family adapters share.
	"adapters/internal/esconfig": {"std", "adapters"},
	// HTTP plumbing the Elasticsearch-family adapters share.
	"adapters/internal/eshttp": {"std", "adapters/internal/dsl", "internal/h1"},
	// The index-level health check the Elasticsearch-family adapters share.
	"adapters/internal/eshealth": {"std", "adapters"},
	// The memory engine's optional English analyzer stems with Snowball.
	"adapters/memory": {"std", "adapters", "capability", "filterlang", "rankmath", "rcp", "github.com/blevesearch/snowballstem"},
	"adapters/elasticsearch": {"std", "adapters", "capability", "filterlang", "rcp", "mapping", "internal/h1", "adapters/internal/dsl",
		"adapters/internal/dslfilter", "adapters/internal/eserrors", "adapters/internal/eshttp", "adapters/internal/eshealth",
		"adapters/internal/esconfig", "adapters/internal/tenantidx", "github.com/elastic/"},
	"adapters/opensearch": {"std", "adapters", "capability", "filterlang", "rcp", "mapping", "internal/fetch", "internal/h1", "adapters/internal/dsl",
		"adapters/internal/dslfilter", "adapters/internal/eserrors", "adapters/internal/eshttp", "adapters/internal/eshealth",
		"adapters/internal/esconfig", "adapters/internal/tenantidx", "github.com/opensearch-project/", "github.com/aws/aws-sdk-go-v2/"},
	"adapters/qdrant": {"std", "adapters", "capability", "filterlang", "rcp", "mapping",
		"github.com/qdrant/", "google.golang.org/grpc", "google.golang.org/protobuf"},
	"adapters/qdrant/qdranttest": {"std", "github.com/qdrant/", "google.golang.org/grpc"},
	// Decorators wrap an Adapter; the standby serves -32010 until an engine is up.
	"adapters/health":            {"std", "adapters"},
	"adapters/resilient":         {"std", "adapters", "capability", "retry", "rcp"},
	"adapters/resilient/standby": {"std", "rcp", "rcp/jsonrpc", "rcp/server"},
	"embedding":                  {"std", "adapters", "capability", "internal/fetch", "internal/h1", "retry", "rcp"},
	"reranker":                   {"std", "internal/fetch", "internal/h1", "retry", "rcp"},
	"reranker/rerankertest":      {"std"},
	"internal/session":           {"std"},
	// The shared state store (Valkey/Redis) behind session.Shared and
	// access.Limiter.
	"internal/statestore": {"std", "retry", "github.com/redis/go-redis/v9", "github.com/go-redis/redis_rate/v10",
		"go.opentelemetry.io/"},
	"internal/feedback": {"std", "internal/fetch", "rcp", "retrieval", "go.opentelemetry.io/"},
	// The one retry loop (backoff, hint, budget) for every retried call.
	"retry":          {"std"},
	"internal/fetch": {"std"},
	"internal/h1":    {"std"},
	// Network fakes for tests.
	"internal/nettest": {"std"},

	// Test kits drive the pipeline over an adapter, so they sit above
	// retrieval, not under the contract they test.
	"conformance/adaptertest": {"std", "adapters", "retrieval", "capability", "filterlang", "rcp", "rcp/rcptest",
		"github.com/google/go-cmp/"},
	"conformance/filterdifftest": {"std", "adapters", "retrieval", "capability", "filterlang", "rcp"},
	"conformance/livetest":       {"std", "adapters", "retrieval", "capability", "embedding", "rcp"},

	// Serving layers above the pipeline.
	"federation": {"std", "filterlang", "rankmath", "rcp", "rcp/server"},
	"mcpserver":  {"std", "filterlang", "rcp", "rcp/schema", "rcp/server", "github.com/modelcontextprotocol/go-sdk/"},
	// Portability checks of tool schemas, for the tests of MCP servers.
	"mcpserver/mcptest": {"std"},
	"internal/access": {"std", "adapters", "internal/fetch", "filterlang", "rankmath", "rcp", "rcp/jsonrpc", "rcp/server", "golang.org/x/time/rate", "github.com/go-jose/go-jose/v4",
		"github.com/modelcontextprotocol/go-sdk/"},
	"internal/telemetry": {"std", "adapters", "capability", "filterlang", "rcp", "rcp/server",
		"github.com/prometheus/", "go.opentelemetry.io/"},
	// viper reads and decodes; yaml.v3 (viper's parser) finds a key's line,
	// goccy/go-yaml a syntax error's; mapstructure names a field that
	// failed to decode.
	"internal/config": {"std", "adapters", "internal/fetch", "retrieval", "filterlang", "github.com/spf13/viper",
		"go.yaml.in/yaml/v3", "github.com/goccy/go-yaml", "github.com/go-viper/mapstructure/v2"},

	// The composition root wires everything together; the binary is
	// its command line. adapters/* (the engines and the resilient
	// decorator) keeps the engine table in engines.go the only list
	// of engines: a new engine needs no entry here.
	"internal/sidecar": {"std", "adapters", "adapters/*", "adapters/resilient/standby", "capability", "internal/sidecar/demo",
		"embedding", "federation", "internal/access", "internal/config", "internal/telemetry", "rcp", "rcp/server",
		"reranker", "internal/session", "internal/feedback", "internal/statestore",
		"retrieval", "mcpserver", "golang.org/x/net/netutil"},
	"internal/sidecar/demo": {"std"},
	"cmd/rcp-sidecar":       {"std", "adapters", "adapters/health", "capability", "internal/sidecar", "rcp", "github.com/spf13/cobra"},
	"deploy/healthcheck":    {"std"},

	// Benchmark tools drive in-process engines and fakes.
	"bench/scifact": {"std", "adapters", "bench/scifact/beir", "embedding", "rcp"},
	"bench/hop":     {"std", "adapters", "bench/scifact/beir", "embedding", "rcp", "github.com/qdrant/"},
	"bench/load":    {"std", "rcp", "github.com/spf13/cobra"},
	"bench/scifact/beir": {"std", "adapters", "adapters/elasticsearch", "adapters/opensearch", "adapters/qdrant",
		"adapters/qdrant/qdranttest", "capability", "rcp", "rcp/server", "retrieval", "github.com/qdrant/"},

	// Documentation and test-only packages.
	"deploy":                 {},
	"integration/access":     {},
	"integration/anyreplica": {},
	"integration/cluster":    {},
	"integration/fault":      {},
	"integration/interop":    {},
	"integration/itest":      {"std"},
	"integration/mcp":        {},
	"integration/oauth":      {},
	"integration/qdrant":     {},
	"integration/replicas":   {},
	"internal/archtest":      {},
}

// TestLayering checks every module package's direct imports against its
// layer, fails on a package the table does not list, and on a listed
// package that no longer exists (so the table stays the whole map).
func TestLayering(t *testing.T) {
	seen := make(map[string]bool, len(layers))
	for _, p := range listPackages(t) {
		r := rel(p.ImportPath)
		seen[r] = true
		allow, ok := layers[r]
		if !ok {
			t.Errorf("package %s has no layer: add it to layers with the imports it may use", r)
			continue
		}
		for _, imp := range p.Imports {
			if !allowed(imp, allow) {
				t.Errorf("%s imports %s; allowed: %v", r, imp, allow)
			}
		}
	}
	for r := range layers {
		if !seen[r] {
			t.Errorf("layers lists %s, which is not a package of the module", r)
		}
	}
}

// TestStdOnlyLeavesStayLeaves checks the transitive closure, not only
// direct imports: the wire and pure packages depend on nothing outside
// the standard library (§2.13).
func TestStdOnlyLeavesStayLeaves(t *testing.T) {
	leaves := []string{"rcp/internal/jsonscan", "rcp/jsonrpc", "rcp", "filterlang", "rankmath", "capability", "mapping", "adapters/internal/dsl", "retry", "internal/fetch"}
	for _, p := range listPackages(t) {
		if !contains(leaves, rel(p.ImportPath)) {
			continue
		}
		for _, d := range p.Deps {
			if !isStd(d) && !contains(leaves, rel(d)) {
				t.Errorf("%s depends on %s", rel(p.ImportPath), d)
			}
		}
	}
}

// TestPureMappingReader: the mapping package reads bytes and plain values
// and reaches no engine: nothing it depends on, directly or not, opens a
// connection or runs a program.
func TestPureMappingReader(t *testing.T) {
	for _, p := range listPackages(t) {
		if rel(p.ImportPath) != "mapping" {
			continue
		}
		for _, d := range p.Deps {
			if d == "net" || strings.HasPrefix(d, "net/") || d == "os/exec" {
				t.Errorf("mapping depends on %s", d)
			}
		}
		return
	}
	t.Fatal("package mapping not found")
}

// owners confines third-party import prefixes to the packages (or
// directory prefixes, ending in "/") allowed to import them in non-test
// code.
var owners = []struct {
	prefix string
	only   []string
}{
	// An adapter's own subpackages (e.g. a test fake such as qdranttest)
	// may use its vendor client too.
	{"github.com/elastic/", []string{"adapters/elasticsearch", "adapters/elasticsearch/"}},
	{"github.com/opensearch-project/", []string{"adapters/opensearch", "adapters/opensearch/"}},
	// The AWS SDK (SigV4 credentials) only behind the OpenSearch adapter.
	{"github.com/aws/", []string{"adapters/opensearch", "adapters/opensearch/"}},
	{"github.com/go-jose/go-jose/v4", []string{"internal/access"}},
	{"github.com/qdrant/", []string{"adapters/qdrant", "adapters/qdrant/"}},
	{"github.com/blevesearch/snowballstem", []string{"adapters/memory"}},
	{"github.com/spf13/cobra", []string{"cmd/"}},
	{"github.com/spf13/pflag", []string{"cmd/"}},
	{"github.com/spf13/viper", []string{"cmd/", "internal/config"}},
}

// testOnly are dependencies that non-test code may use only in test
// helper packages (named *test, like rcptest and adaptertest).
var testOnly = []string{"github.com/santhosh-tekuri/jsonschema/", "golang.org/x/tools/txtar", "github.com/google/go-cmp/",
	"github.com/VictoriaMetrics/metricsql"}

func TestDependencyOwners(t *testing.T) {
	for _, p := range listPackages(t) {
		r := rel(p.ImportPath)
		if strings.HasPrefix(r, "integration/") || r == "integration" || strings.HasPrefix(r, "bench/") {
			continue // end-to-end tests and benchmark tools may use any client
		}
		for _, imp := range p.Imports {
			checkOwner(t, r, imp)
			if hasPrefix(imp, testOnly) && !strings.HasSuffix(p.Name, "test") {
				t.Errorf("%s (non-test code) imports test-only %s", r, imp)
			}
		}
	}
}

func checkOwner(t *testing.T, r, imp string) {
	t.Helper()
	for _, o := range owners {
		if !strings.HasPrefix(imp, o.prefix) {
			continue
		}
		if !ownedBy(r, o.only) {
			t.Errorf("%s imports %s; only %v may", r, imp, o.only)
		}
	}
}

// TestBinaryHasNoTestDeps: the shipped binaries (cmd/..., deploy/...) must not link
// the testing package or test-only libraries, even transitively. Tools
// under bench/ drive in-process fakes on purpose and are not shipped.
func TestBinaryHasNoTestDeps(t *testing.T) {
	found := false
	for _, p := range listPackages(t) {
		if r := rel(p.ImportPath); p.Name != "main" || !strings.HasPrefix(r, "cmd/") && !strings.HasPrefix(r, "deploy/") {
			continue
		}
		found = true
		for _, d := range p.Deps {
			if d == "testing" || hasPrefix(d, testOnly) || strings.HasSuffix(d, "test") && inModule(d) {
				t.Errorf("%s links %s", rel(p.ImportPath), d)
			}
		}
	}
	if !found {
		t.Log("no main package yet")
	}
}

func ownedBy(r string, only []string) bool {
	for _, o := range only {
		if r == o || strings.HasSuffix(o, "/") && strings.HasPrefix(r, o) {
			return true
		}
	}
	return false
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
