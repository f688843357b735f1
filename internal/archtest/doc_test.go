package archtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// archDoc is the architecture document whose package table (§2.2) and
// import sketch must say what layers enforces.
const archDoc = "docs/ARCHITECTURE.md"

// docRow is one row of the package table: the package and the set of
// imports its "May import" cell names.
type docRow struct {
	line  int
	allow []string
}

// parseDocTable reads the package table of §2.2: the rows after the
// "| Package | Owns | May import |" header up to the first line that is
// not a table row. A cell lists "std" and backticked packages or
// third-party prefixes separated by commas; words outside backticks are
// commentary, and "—" alone is the empty list.
func parseDocTable(text string) (map[string]docRow, error) {
	rows := map[string]docRow{}
	sc := bufio.NewScanner(strings.NewReader(text))
	in := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !in {
			in = strings.HasPrefix(line, "| Package | Owns | May import |")
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			return nil, fmt.Errorf("%s:%d: a package row has 3 cells, this one %d", archDoc, n, len(cells))
		}
		if strings.Trim(cells[0], " -") == "" {
			continue // the header's separator row
		}
		pkgs := backticked(cells[0])
		if len(pkgs) != 1 {
			return nil, fmt.Errorf("%s:%d: the first cell names one package in backticks, got %q", archDoc, n, strings.TrimSpace(cells[0]))
		}
		if _, dup := rows[pkgs[0]]; dup {
			return nil, fmt.Errorf("%s:%d: a second row for %s", archDoc, n, pkgs[0])
		}
		rows[pkgs[0]] = docRow{line: n, allow: parseAllow(cells[2])}
	}
	if !in {
		return nil, fmt.Errorf("%s: no package table (header \"| Package | Owns | May import |\")", archDoc)
	}
	return rows, nil
}

// parseAllow is the set a "May import" cell names, sorted.
func parseAllow(cell string) []string {
	var out []string
	for _, part := range strings.Split(cell, ",") {
		part = strings.TrimSpace(part)
		if part == "std" || strings.HasPrefix(part, "std ") {
			out = append(out, "std")
			continue
		}
		out = append(out, backticked(part)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// backticked returns the `code spans` of s.
func backticked(s string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(s, "`")
		if !ok {
			return out
		}
		span, after, ok := strings.Cut(rest, "`")
		if !ok {
			return out
		}
		out = append(out, span)
		s = after
	}
}

// allowCell is the "May import" cell that states allow.
func allowCell(allow []string) string {
	if len(allow) == 0 {
		return "—"
	}
	parts := make([]string, len(allow))
	for i, a := range allow {
		if a == "std" {
			parts[i] = a
		} else {
			parts[i] = "`" + a + "`"
		}
	}
	return strings.Join(parts, ", ")
}

func readArchDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), archDoc))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestArchitectureDocTable: the package table of docs/ARCHITECTURE.md
// §2.2 has exactly one row per module package, and each row's "May
// import" cell names exactly what layers allows that package. A package
// the code has but the table lacks fails with the row to add.
func TestArchitectureDocTable(t *testing.T) {
	rows, err := parseDocTable(readArchDoc(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range docTableDiffs(rows, modulePackages(t), layers) {
		t.Error(msg)
	}
}

// modulePackages are the module-relative paths of the module's packages.
func modulePackages(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range listPackages(t) {
		out = append(out, rel(p.ImportPath))
	}
	return out
}

// docTableDiffs lists every disagreement between the doc's rows, the
// module's packages and the layers table, one message each.
func docTableDiffs(rows map[string]docRow, pkgs []string, layers map[string][]string) []string {
	var msgs []string
	have := map[string]bool{}
	for _, p := range pkgs {
		have[p] = true
		want := slices.Sorted(slices.Values(layers[p]))
		want = slices.Compact(want)
		r, ok := rows[p]
		switch {
		case !ok:
			msgs = append(msgs, fmt.Sprintf("%s §2.2 has no row for package %s: add\n\t| `%s` | <what it owns> | %s |",
				archDoc, p, p, allowCell(layers[p])))
		case !slices.Equal(r.allow, want):
			msgs = append(msgs, fmt.Sprintf("%s:%d: the row of %s says it may import %s; layers (internal/archtest) allows %s",
				archDoc, r.line, p, allowCell(r.allow), allowCell(layers[p])))
		}
	}
	for p, r := range rows {
		if !have[p] {
			msgs = append(msgs, fmt.Sprintf("%s:%d: a row for %s, which is not a package of the module: remove it", archDoc, r.line, p))
		}
	}
	slices.Sort(msgs)
	return msgs
}

// TestArchitectureDocSketch: every arrow of the import sketch in §2.2
// ("A, B ──→ C, D": C and D import A and B) is an edge that layers
// allows, so the picture shows no edge the code may not have.
func TestArchitectureDocSketch(t *testing.T) {
	edges, err := parseSketch(readArchDoc(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(edges) == 0 {
		t.Fatalf("%s: the import sketch has no arrows", archDoc)
	}
	for _, e := range edges {
		allow, ok := layers[e.to]
		if !ok {
			t.Errorf("%s:%d: the sketch names %s, which layers does not list", archDoc, e.line, e.to)
			continue
		}
		if !allowed(module+"/"+e.from, allow) {
			t.Errorf("%s:%d: the sketch draws %s ──→ %s, but layers does not let %s import %s", archDoc, e.line, e.from, e.to, e.to, e.from)
		}
	}
}

type sketchEdge struct {
	from, to string
	line     int
}

// parseSketch reads the code block after "Import direction": each line is
// groups of comma-separated packages joined by arrows, an arrow meaning
// "is imported by".
func parseSketch(text string) ([]sketchEdge, error) {
	lines := strings.Split(text, "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Import direction") })
	if at < 0 {
		return nil, fmt.Errorf("%s: no \"Import direction\" sketch", archDoc)
	}
	open := at + 1 + slices.IndexFunc(lines[at+1:], func(l string) bool { return strings.HasPrefix(l, "```") })
	if open == at {
		return nil, fmt.Errorf("%s: the import sketch has no code block", archDoc)
	}
	var edges []sketchEdge
	for i := open + 1; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
		groups := strings.Split(strings.ReplaceAll(lines[i], "──→", "→"), "→")
		for g := 0; g+1 < len(groups); g++ {
			for _, from := range sketchGroup(groups[g]) {
				for _, to := range sketchGroup(groups[g+1]) {
					edges = append(edges, sketchEdge{from: from, to: to, line: i + 1})
				}
			}
		}
	}
	return edges, nil
}

func sketchGroup(s string) []string {
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.Trim(strings.TrimSpace(name), "─ ")
		switch name {
		case "":
		case "adapters/<engine>":
			out = append(out, adapterChildren()...)
		default:
			out = append(out, name)
		}
	}
	return out
}

// TestDocTableDiffs: the messages name the row to add for a package the
// table lacks (as a new package's first run shows), a cell that
// disagrees with layers, and a row for a package that is gone.
func TestDocTableDiffs(t *testing.T) {
	doc := "intro\n\n| Package | Owns | May import |\n|---|---|---|\n" +
		"| `rcp` | the vocabulary | std, `rcp/jsonrpc` *(note)* |\n" +
		"| `filterlang` | filters | std |\n" +
		"| `gone` | nothing | — |\n\nafter\n"
	rows, err := parseDocTable(doc)
	if err != nil {
		t.Fatal(err)
	}
	if got := rows["rcp"].allow; !slices.Equal(got, []string{"rcp/jsonrpc", "std"}) {
		t.Fatalf("rcp row parsed as %v", got)
	}
	layers := map[string][]string{
		"rcp":        {"std", "rcp/jsonrpc"},
		"filterlang": {"std", "rcp"},
		"mapping":    {"std", "rcp", "go.example.org/x/"},
	}
	got := docTableDiffs(rows, []string{"rcp", "filterlang", "mapping"}, layers)
	want := []string{
		archDoc + " §2.2 has no row for package mapping: add\n\t| `mapping` | <what it owns> | std, `rcp`, `go.example.org/x/` |",
		archDoc + ":7: a row for gone, which is not a package of the module: remove it",
		archDoc + ":6: the row of filterlang says it may import std; layers (internal/archtest) allows std, `rcp`",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("diffs =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// adapterChildren stands for the sketch's `adapters/<engine>`: every
// package one level under adapters/ that imports the contract (the
// engines, and the resilient decorator, for which the edge holds too),
// so the placeholder needs no list of engines here.
func adapterChildren() []string {
	var out []string
	for p, allow := range layers {
		rest, ok := strings.CutPrefix(p, "adapters/")
		if ok && !strings.Contains(rest, "/") && allowed(module+"/adapters", allow) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
