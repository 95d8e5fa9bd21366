package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// listedPackage is what go list -json says of a package.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Export     string
	DepOnly    bool
	Error      *struct{ Err string }
}

// listPackages runs goTool list on the import paths, with their
// dependencies' export data (building what is not in the build cache).
func listPackages(goTool string, importPaths []string) ([]listedPackage, error) {
	args := append([]string{"list", "-e", "-export", "-deps", "-json=ImportPath,Dir,GoFiles,CgoFiles,Export,DepOnly,Error"}, importPaths...)
	cmd := exec.Command(goTool, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// widenProfile adds to p the blocks of the expressions it proves were
// evaluated (package doc), for every package with a file in p, and returns
// how many expressions of each kind it added. goTool runs go list.
func widenProfile(p *profile, goTool string) (map[string]int, error) {
	byPkg := map[string][]block{}
	var importPaths []string
	for _, b := range p.blocks {
		ip := path.Dir(b.file)
		if _, ok := byPkg[ip]; !ok {
			importPaths = append(importPaths, ip)
		}
		byPkg[ip] = append(byPkg[ip], b)
	}
	kinds := map[string]int{}
	if len(importPaths) == 0 {
		return kinds, nil
	}
	sort.Strings(importPaths)
	listed, err := listPackages(goTool, importPaths)
	if err != nil {
		return nil, err
	}
	exports := map[string]string{}
	for _, lp := range listed {
		exports[lp.ImportPath] = lp.Export
	}
	for _, lp := range listed {
		if lp.DepOnly {
			continue
		}
		if lp.Error != nil {
			return nil, fmt.Errorf("package %s: %s", lp.ImportPath, lp.Error.Err)
		}
		src, err := loadSource(lp, exports)
		if err != nil {
			return nil, err
		}
		added, k := widenPackage(src, byPkg[lp.ImportPath])
		p.blocks = append(p.blocks, added...)
		for kind, n := range k {
			kinds[kind] += n
		}
	}
	return kinds, nil
}

// loadSource parses the package's Go files and type-checks them against
// its dependencies' export data.
func loadSource(lp listedPackage, exports map[string]string) (source, error) {
	if len(lp.CgoFiles) > 0 {
		return source{}, fmt.Errorf("package %s: cgo files are not supported", lp.ImportPath)
	}
	fset := token.NewFileSet()
	src := source{importPath: lp.ImportPath, fset: fset, files: map[string]*ast.File{}}
	var files []*ast.File
	for _, name := range lp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(lp.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return source{}, fmt.Errorf("package %s: %w", lp.ImportPath, err)
		}
		src.files[name] = f
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(importPath string) (io.ReadCloser, error) {
		file, ok := exports[importPath]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", importPath)
		}
		return os.Open(file)
	})
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: imp}
	if _, err := conf.Check(lp.ImportPath, fset, files, info); err != nil {
		return source{}, fmt.Errorf("type-check %s: %w", lp.ImportPath, err)
	}
	src.defs, src.uses = info.Defs, info.Uses
	return src, nil
}
