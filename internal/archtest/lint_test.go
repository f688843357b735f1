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

// sprintfCalls returns the positions of fmt.Sprint* calls in file whose
// result does not go straight into an error: an argument of a call whose
// name mentions err/invalid/check (errors.New, rcp.InvalidParams,
// checkID), a composite literal of an error type, or an Error method.
func sprintfCalls(t *testing.T, file string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	fmtName := importName(f, "fmt")
	if fmtName == "" {
		return nil
	}
	var found []string
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if isSprint(n, fmtName) && !feedsError(stack) {
			found = append(found, fset.Position(n.Pos()).String())
		}
		stack = append(stack, n)
		return true
	})
	return found
}

func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return path
	}
	return ""
}

func isSprint(n ast.Node, fmtName string) bool {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == fmtName && strings.HasPrefix(sel.Sel.Name, "Sprint")
}

// feedsError inspects the ancestors of a Sprint call (innermost last).
func feedsError(stack []ast.Node) bool {
	for i := len(stack) - 1; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.KeyValueExpr, *ast.UnaryExpr:
			continue
		case *ast.CallExpr:
			return errorish(exprName(p.Fun))
		case *ast.CompositeLit:
			return errorish(exprName(p.Type))
		case *ast.ReturnStmt:
			return enclosingFunc(stack[:i]) == "Error"
		default:
			return false
		}
	}
	return false
}

func errorish(name string) bool {
	l := strings.ToLower(name)
	return strings.Contains(l, "err") || strings.Contains(l, "invalid") || strings.HasPrefix(l, "check")
}

func exprName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprName(x.X) + "." + x.Sel.Name
	case *ast.StarExpr:
		return exprName(x.X)
	}
	return ""
}

func enclosingFunc(stack []ast.Node) string {
	for i := len(stack) - 1; i >= 0; i-- {
		if fd, ok := stack[i].(*ast.FuncDecl); ok {
			return fd.Name.Name
		}
	}
	return ""
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
		{"package p\nimport (\"errors\"; \"fmt\")\nvar e = errors.New(fmt.Sprintf(\"%d\", 1))\n", 0},
		{"package p\nimport \"fmt\"\nfunc checkID(string, string) error { return nil }\nvar e = checkID(\"x\", fmt.Sprintf(\"ids[%d]\", 1))\n", 0},
		{"package p\nimport \"fmt\"\ntype errX struct{ s string }\nvar e = &errX{fmt.Sprintf(\"%d\", 1)}\n", 0},
		{"package p\nimport \"fmt\"\ntype E struct{}\nfunc (E) Error() string { return fmt.Sprintf(\"%d\", 1) }\n", 0},
		{"package p\nimport \"fmt\"\nfunc body() string { return fmt.Sprintf(`{\"q\":%q}`, \"x\") }\n", 1},
		{"package p\nimport \"fmt\"\ntype req struct{ Body string }\nvar r = req{Body: fmt.Sprintf(\"%d\", 1)}\n", 1},
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
