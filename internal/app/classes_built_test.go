package app_test

import (
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryClassIsBuiltByNewClass: the runbook test sees the classes
// declared with delivery.NewClass (or NewOriginDownClass) only. This
// type-checks every non-test Go file of the module and finds no other way
// a delivery.Class value is made:
//
//   - no constant of type delivery.Class: a literal, an untyped constant
//     (`const c = "x"` handed to delivery.Permanent), a typed one
//     (`const C delivery.Class = "x"`, how unknown_queue escaped), a
//     conversion (`delivery.Class("x")`), `"a" + "b"`, a `Class: "x"` or
//     `ErrorClass: "x"` field, `return "x"` from a func returning a class;
//   - no conversion of a string to delivery.Class but NewClass's own.
//
// A constant compared with a class (`c == ""`, a switch case) makes none
// and is allowed. Each of these would reach logs, metrics and dead letters
// with no runbook row. Types make the check see through names, packages
// and import aliases, which a reading of the syntax alone cannot.
//
// And every package that calls NewClass (or NewOriginDownClass) is linked
// by this package, so that TestRunbookHasARowForEveryClass, which reads
// delivery.Classes of what it links, sees its classes: a new package's
// class escapes neither check.
func TestEveryClassIsBuiltByNewClass(t *testing.T) {
	t.Parallel()
	const module, deliveryPath = "github.com/heraldhq/herald", "github.com/heraldhq/herald/internal/delivery"

	// Export data of every package the module builds on, and the module's
	// own packages with their files, from one `go list`.
	cmd := exec.Command("go", "list", "-export", "-deps", "-f",
		`{{.ImportPath}}|{{.Export}}|{{if .Module}}{{.Module.Path}}{{end}}|{{.Dir}}|{{join .GoFiles ","}}`, "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	exports := map[string]string{}
	type pkg struct {
		path, dir string
		files     []string
	}
	var own []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		require.Len(t, f, 5, line)
		exports[f[0]] = f[1]
		if f[2] == module && f[4] != "" {
			own = append(own, pkg{path: f[0], dir: f[3], files: strings.Split(f[4], ",")})
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })

	var found []string
	checked := 0
	declaring := map[string][]string{} // package: where it calls NewClass
	for _, p := range own {
		var files []*ast.File
		for _, name := range p.files {
			f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, 0)
			require.NoError(t, err)
			files = append(files, f)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
		_, err := (&types.Config{Importer: imp}).Check(p.path, fset, files, info)
		require.NoError(t, err, p.path)
		isClass := func(typ types.Type) bool {
			n, ok := typ.(*types.Named)
			return ok && n.Obj().Name() == "Class" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == deliveryPath
		}
		for id, obj := range info.Uses {
			if fn, ok := obj.(*types.Func); ok && fn.Pkg() != nil && fn.Pkg().Path() == deliveryPath &&
				(fn.Name() == "NewClass" || fn.Name() == "NewOriginDownClass") {
				declaring[p.path] = append(declaring[p.path], fset.Position(id.Pos()).String())
			}
		}
		for _, f := range files {
			var stack []ast.Node
			compared := func() bool { // under a comparison or a switch case
				for i := len(stack) - 2; i >= 0; i-- {
					switch x := stack[i].(type) {
					case *ast.BinaryExpr:
						switch x.Op {
						case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
							return true
						}
					case *ast.CaseClause:
						return true
					}
				}
				return false
			}
			inNewClass := func() bool {
				for _, n := range stack {
					if fd, ok := n.(*ast.FuncDecl); ok && p.path == deliveryPath && fd.Recv == nil && fd.Name.Name == "NewClass" {
						return true
					}
				}
				return false
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if n == nil {
					stack = stack[:len(stack)-1]
					return false
				}
				stack = append(stack, n)
				e, ok := n.(ast.Expr)
				if !ok {
					return true
				}
				tv, ok := info.Types[e]
				if !ok || !isClass(tv.Type) {
					return true
				}
				checked++
				at := fset.Position(e.Pos()).String()
				switch {
				case tv.Value != nil && !compared():
					found = append(found, at+": a class made from the constant "+tv.Value.ExactString())
					return false
				case tv.Value == nil:
					if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 && info.Types[call.Fun].IsType() && !inNewClass() {
						found = append(found, at+": a class converted from a string")
					}
				}
				return true
			})
		}
	}
	require.NotZero(t, checked, "no expression of type delivery.Class seen: the check reads nothing")
	require.Empty(t, found, "build every class with delivery.NewClass, in the package that owns it, so that the runbook test sees it")

	deps := exec.Command("go", "list", "-deps", "./internal/app")
	deps.Dir = "../.."
	deps.Stderr = &stderr
	out, err = deps.Output()
	require.NoError(t, err, stderr.String())
	linked := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		linked[p] = true
	}
	require.Contains(t, declaring, module+"/internal/webhook", "the check finds no NewClass call: it reads nothing")
	for p, at := range declaring {
		require.True(t, linked[p], "%s declares classes (%s) but internal/app does not link it: the runbook test cannot see them", p, strings.Join(at, ", "))
	}
}
