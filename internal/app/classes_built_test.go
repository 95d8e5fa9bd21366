package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryClassIsBuiltByNewClass: the runbook test sees the classes
// declared with delivery.NewClass (or NewOriginDownClass) only. A class
// written as a literal elsewhere — a typed constant or variable
// (`const C delivery.Class = "x"`, how unknown_queue escaped it), a
// conversion (`delivery.Class("x")`), a literal handed to
// delivery.Permanent or delivery.Transient, or a PermanentError or
// TransientError literal with `Class: "x"` — would reach logs, metrics and
// dead letters with no runbook row. This reads every non-test Go file of
// the module and finds none.
func TestEveryClassIsBuiltByNewClass(t *testing.T) {
	t.Parallel()
	root := "../.."
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".venv", ".tools", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		inDelivery := f.Name.Name == "delivery"
		// isDelivery reports whether e names delivery's name (from
		// outside the package, delivery.name; inside it, name).
		isDelivery := func(e ast.Expr, names ...string) bool {
			switch x := e.(type) {
			case *ast.SelectorExpr:
				pkg, ok := x.X.(*ast.Ident)
				return ok && pkg.Name == "delivery" && slices.Contains(names, x.Sel.Name)
			case *ast.Ident:
				return inDelivery && slices.Contains(names, x.Name)
			}
			return false
		}
		isLiteral := func(e ast.Expr) bool {
			lit, ok := e.(*ast.BasicLit)
			return ok && lit.Kind == token.STRING
		}
		report := func(n ast.Node, what string) {
			found = append(found, fset.Position(n.Pos()).String()+": "+what)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ValueSpec:
				if x.Type != nil && isDelivery(x.Type, "Class") {
					for _, v := range x.Values {
						if isLiteral(v) {
							report(x, "a class declared as a literal")
						}
					}
				}
			case *ast.CallExpr:
				if len(x.Args) > 0 && isLiteral(x.Args[0]) && isDelivery(x.Fun, "Class", "Permanent", "Transient") {
					report(x, "a class built from a literal")
				}
			case *ast.CompositeLit:
				if x.Type != nil && isDelivery(x.Type, "PermanentError", "TransientError") {
					for _, el := range x.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok && isLiteral(kv.Value) {
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Class" {
								report(x, "a class built from a literal")
							}
						}
					}
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "build every class with delivery.NewClass, in the package that owns it, so that the runbook test sees it")
}
