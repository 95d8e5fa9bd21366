package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadSourceErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	write("syntax.go", "package p\n\nfunc {\n")
	write("types.go", "package p\n\nvar x int = \"s\"\n")
	write("imports.go", "package p\n\nimport \"strconv\"\n\nvar x = strconv.Itoa(1)\n")
	for name, tc := range map[string]struct {
		lp      listedPackage
		exports map[string]string
		err     string
	}{
		"cgo":            {listedPackage{ImportPath: "p", CgoFiles: []string{"c.go"}}, nil, "package p: cgo files are not supported"},
		"syntax":         {listedPackage{ImportPath: "p", Dir: dir, GoFiles: []string{"syntax.go"}}, nil, "package p: " + filepath.Join(dir, "syntax.go") + ":3:6: expected"},
		"types":          {listedPackage{ImportPath: "p", Dir: dir, GoFiles: []string{"types.go"}}, nil, "type-check p: " + filepath.Join(dir, "types.go") + ":3:13: cannot use"},
		"no export":      {listedPackage{ImportPath: "p", Dir: dir, GoFiles: []string{"imports.go"}}, nil, "no export data for strconv"},
		"no export file": {listedPackage{ImportPath: "p", Dir: dir, GoFiles: []string{"imports.go"}}, map[string]string{"strconv": ""}, "no export data for strconv"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := loadSource(tc.lp, tc.exports)
			require.ErrorContains(t, err, tc.err)
		})
	}
}
