package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// queryFiles are the adapter files that build native request bodies;
// they must use typed structs and encoding/json, never fmt.Sprintf
// (§15.4 injection into the backing query engine).
var queryFiles = map[string]bool{"plan.go": true, "filter.go": true, "search.go": true, "write.go": true}

func TestNoSprintfInQueryBuilders(t *testing.T) {
	root := filepath.Join(moduleRoot(t), "adapters")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !queryFiles[d.Name()] {
			return err
		}
		checked++
		for _, pos := range sprintfCalls(t, path) {
			t.Errorf("%s: fmt.Sprintf in a query-building file; build bodies from typed structs", pos)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checked %d query-building files", checked)
}

// sprintfCalls returns the positions of fmt.Sprintf/Sprint/Sprintln
// calls in file, resolving the import name of "fmt".
func sprintfCalls(t *testing.T, file string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	fmtName := ""
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) == "fmt" {
			fmtName = "fmt"
			if imp.Name != nil {
				fmtName = imp.Name.Name
			}
		}
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || fmtName == "" {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == fmtName && strings.HasPrefix(sel.Sel.Name, "Sprint") {
			found = append(found, fset.Position(sel.Pos()).String())
		}
		return true
	})
	return found
}

func TestSprintfDetector(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		src  string
		want int
	}{
		{"package p\nimport \"fmt\"\nvar s = fmt.Sprintf(\"%d\", 1)\n", 1},
		{"package p\nimport f \"fmt\"\nvar s = f.Sprint(1)\n", 1},
		{"package p\nimport \"fmt\"\nvar e = fmt.Errorf(\"x\")\n", 0},
		{"package p\nimport \"strconv\"\nvar s = strconv.Itoa(1)\n", 0},
	}
	for i, tt := range tests {
		path := filepath.Join(dir, "plan.go")
		if err := writeFile(path, tt.src); err != nil {
			t.Fatal(err)
		}
		if got := len(sprintfCalls(t, path)); got != tt.want {
			t.Errorf("case %d: found %d calls, want %d", i, got, tt.want)
		}
	}
}
