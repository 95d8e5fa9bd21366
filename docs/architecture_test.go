// Package docs_test keeps docs/architecture.md true to the code.
package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/heraldhq/herald"

// floors reads architecture.md: each "### " heading under "## The floors"
// is a floor, from the top down, and each table row's first cell names its
// packages in backquotes.
func floors(t *testing.T) map[string]int {
	t.Helper()
	raw, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start := strings.Index(text, "## The floors")
	end := strings.Index(text, "## The path of one record")
	if start < 0 || end < start {
		t.Fatal(`architecture.md has no "## The floors" section before "## The path of one record"`)
	}
	named := map[string]int{}
	floor := -1
	cell := regexp.MustCompile("`([a-z0-9_/-]+)`")
	for _, line := range strings.Split(text[start:end], "\n") {
		switch {
		case strings.HasPrefix(line, "### "):
			floor++
		case strings.HasPrefix(line, "| `") && floor >= 0:
			first := strings.SplitN(line[1:], "|", 2)[0]
			for _, m := range cell.FindAllStringSubmatch(first, -1) {
				if prev, ok := named[m[1]]; ok && prev != floor {
					t.Errorf("%s is named on two floors", m[1])
				}
				named[m[1]] = floor
			}
		}
	}
	if len(named) == 0 {
		t.Fatal("architecture.md names no package")
	}
	return named
}

// packages returns every package directory of the module (one with a Go
// file that is not a test), relative to the repository root, with the
// module's packages its files import.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel("..", filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		imports := pkgs[rel]
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if dep, ok := strings.CutPrefix(p, module+"/"); ok && !slices.Contains(imports, dep) {
				imports = append(imports, dep)
			}
		}
		pkgs[rel] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestArchitectureNamesEveryPackage: a package the page does not name, or
// a name on the page that is no package, fails; so does an import that
// points up a floor.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	named := floors(t)
	pkgs := packages(t)
	for p := range pkgs {
		if _, ok := named[p]; !ok {
			t.Errorf("package %s is not named in docs/architecture.md: add it to the floor it belongs to", p)
		}
	}
	for p := range named {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("docs/architecture.md names %s, which is no package of the module", p)
		}
	}
	for p, imports := range pkgs {
		for _, dep := range imports {
			if named[dep] < named[p] {
				t.Errorf("%s (floor %d) imports %s, on floor %d above it: move one of them, or the page", p, named[p], dep, named[dep])
			}
		}
	}
}
