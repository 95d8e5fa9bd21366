package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fixture is one package "p" of one file p.go, parsed and type-checked
// (type errors, such as an unused label, do not matter to the switch
// rules and are let through).
type fixture struct {
	t   *testing.T
	src string
	pkg source
}

func setup(t *testing.T, src string) fixture {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	require.NoError(t, err)
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	_, _ = (&types.Config{Error: func(error) {}}).Check("p", fset, []*ast.File{f}, info)
	return fixture{t: t, src: src, pkg: source{importPath: "p", fset: fset, files: map[string]*ast.File{"p.go": f}, defs: info.Defs, uses: info.Uses}}
}

// at is the position of the only occurrence of needle in the source.
func (f fixture) at(needle string) pos {
	f.t.Helper()
	require.Equal(f.t, 1, strings.Count(f.src, needle), "occurrences of %q", needle)
	i := strings.Index(f.src, needle)
	line := strings.Count(f.src[:i], "\n") + 1
	return pos{line, i - strings.LastIndexByte(f.src[:i], '\n')}
}

// ran is the profile of p.go: a block that ran over each needle, one that
// did not over each of notRan.
func (f fixture) profile(ran []string, notRan ...string) []block {
	var blocks []block
	for i, needles := range [][]string{ran, notRan} {
		for _, n := range needles {
			start := f.at(n)
			blocks = append(blocks, block{file: "p/p.go", start: start, end: pos{start.line, start.col + len(n)}, stmts: 1, count: 1 - i})
		}
	}
	return blocks
}

// covered lists which needles lie in an added block, as gremlins checks a
// mutant's position (its first byte here).
func (f fixture) covered(added []block, needles ...string) map[string]bool {
	got := map[string]bool{}
	for _, n := range needles {
		p := f.at(n)
		for _, b := range added {
			if b.file == "p/p.go" && !p.before(b.start) && p.before(b.end) {
				got[n] = true
			}
		}
	}
	return got
}

func (f fixture) widen(ran []string, notRan ...string) []block {
	added, _ := widenPackage(f.pkg, f.profile(ran, notRan...))
	return added
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

const switchSrc = `package p

func f(x int) int {
	switch {
	case x > 10, x > 20:
		return 1
	case x > 5:
		return 2
	case x < 0:
		return 3
	default:
		return 4
	}
}
`

func TestSwitchCases(t *testing.T) {
	t.Parallel()
	exprs := []string{"x > 10", "x > 20", "x > 5", "x < 0"}
	for name, tc := range map[string]struct {
		ran  []string
		want map[string]bool
	}{
		"nothing ran":           {nil, set()},
		"first clause's body":   {[]string{"return 1"}, set("x > 10")},
		"second clause's body":  {[]string{"return 2"}, set("x > 10", "x > 20", "x > 5")},
		"last clause's body":    {[]string{"return 3"}, set(exprs...)},
		"default's body":        {[]string{"return 4"}, set(exprs...)},
		"first and second body": {[]string{"return 1", "return 2"}, set("x > 10", "x > 20", "x > 5")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := setup(t, switchSrc)
			added := f.widen(tc.ran, "return 1", "return 2", "return 3", "return 4")
			require.Equal(t, tc.want, f.covered(added, exprs...))
		})
	}
}

func TestSwitchCasesCounted(t *testing.T) {
	t.Parallel()
	f := setup(t, switchSrc)
	added, kinds := widenPackage(f.pkg, f.profile([]string{"return 4"}))
	require.Len(t, added, 4)
	require.Equal(t, map[string]int{kindCase: 4}, kinds)
	for _, b := range added {
		require.Equal(t, 0, b.stmts)
		require.Equal(t, 1, b.count)
	}
}

func TestSwitchFallthrough(t *testing.T) {
	t.Parallel()
	src := `package p

func g(x int) int {
	n := 0
	switch {
	case x > 1:
		n++
		fallthrough
	case x > 2:
		n += 2
	case x > 3:
		n += 3
		fallthrough
	default:
		n += 4
	}
	return n
}
`
	exprs := []string{"x > 1", "x > 2", "x > 3"}
	for name, tc := range map[string]struct {
		ran  []string
		want map[string]bool
	}{
		// The second body may have been entered by the first's fallthrough.
		"both bodies":            {[]string{"n++", "n += 2"}, set("x > 1")},
		"second body, not first": {[]string{"n += 2"}, set("x > 1", "x > 2")},
		// So may default's by the third's.
		"third and default": {[]string{"n += 3", "n += 4"}, set("x > 1", "x > 2", "x > 3")},
		"default alone":     {[]string{"n += 4"}, set(exprs...)},
		"after the switch":  {[]string{"return n"}, set()},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := setup(t, src)
			require.Equal(t, tc.want, f.covered(f.widen(tc.ran), exprs...))
		})
	}
}

func TestSwitchNoClauseMatched(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		clause string // a third clause
		after  string // the statements after the switch
		want   bool   // the case expressions are covered when the statement after ran
	}{
		"return, panic and continue": {"case x == 3:\n\t\t\tcontinue", "\t\treturn 0", true},
		"a break in a nested loop":   {"case x == 3:\n\t\t\tfor range x {\n\t\t\t\tbreak\n\t\t\t}\n\t\t\tcontinue", "\t\treturn 0", true},
		"a break in a nested select": {"case x == 3:\n\t\t\tselect {\n\t\t\tdefault:\n\t\t\t\tbreak\n\t\t\t}\n\t\t\treturn 3", "\t\treturn 0", true},
		"a break in a func literal":  {"case x == 3:\n\t\t\tfunc() {\n\t\t\t\tfor {\n\t\t\t\t\tbreak\n\t\t\t\t}\n\t\t\t}()\n\t\t\treturn 3", "\t\treturn 0", true},
		"a break":                    {"case x == 3:\n\t\t\tif x > 0 {\n\t\t\t\tbreak\n\t\t\t}\n\t\t\treturn 3", "\t\treturn 0", false},
		"a labeled break":            {"case x == 3:\n\t\t\tfor {\n\t\t\t\tbreak L\n\t\t\t}", "\t\treturn 0", false},
		"a goto":                     {"case x == 3:\n\t\t\tgoto M\n\t\t\treturn 3", "\t\treturn 0\n\tM:\n\t\treturn 9", false},
		"a body falling out":         {"case x == 3:\n\t\t\tx++", "\t\treturn 0", false},
		"an empty body":              {"case x == 3:", "\t\treturn 0", false},
		"a default":                  {"default:\n\t\t\treturn 3", "\t\treturn 0", false},
		"a call other than panic":    {"case x == 3:\n\t\t\tprintln(x)", "\t\treturn 0", false},
		"a labeled next statement":   {"case x == 3:\n\t\t\treturn 3", "\tN:\n\t\treturn 0", false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := "package p\n\nfunc h(x int) int {\nL:\n\tfor {\n\t\tswitch {\n\t\tcase x == 1:\n\t\t\treturn 1\n\t\tcase x == 2:\n\t\t\tpanic(x)\n\t\t" +
				tc.clause + "\n\t\t}\n" + tc.after + "\n\t}\n}\n"
			f := setup(t, src)
			added := f.widen([]string{"return 0"})
			want := set()
			if tc.want {
				want = set("x == 1", "x == 2")
			}
			require.Equal(t, want, f.covered(added, "x == 1", "x == 2"))
		})
	}
}

func TestSwitchLastStatement(t *testing.T) {
	t.Parallel()
	// A switch ending its block has no statement after it to tell.
	f := setup(t, "package p\n\nfunc h(x int) {\n\tswitch {\n\tcase x == 1:\n\t\treturn\n\t}\n}\n")
	require.Empty(t, f.widen([]string{"return"}, "x == 1"))
}

func TestTypeSwitch(t *testing.T) {
	t.Parallel()
	f := setup(t, `package p

func ts(v any) int {
	switch v.(type) {
	case int:
		return 1
	case string:
		return 2
	}
	return 0
}
`)
	require.Equal(t, set("int:"), f.covered(f.widen([]string{"return 1"}), "int:", "string:"))
	require.Equal(t, set("int:", "string:"), f.covered(f.widen([]string{"return 2"}), "int:", "string:"))
}

func TestSwitchFuncLiteral(t *testing.T) {
	t.Parallel()
	f := setup(t, `package p

func fl(x int) int {
	switch {
	case func() bool { return x > 7 }() && x < 100:
		return 1
	default:
		return 0
	}
}
`)
	require.Equal(t, set("() &&", "x < 100"), f.covered(f.widen([]string{"return 0"}), "func()", "x > 7", "() &&", "x < 100"))
}

func TestSwitchKeepsProfileBlocks(t *testing.T) {
	t.Parallel()
	f := setup(t, switchSrc)
	blocks := f.profile([]string{"return 4"})
	start := f.at("x > 5")
	blocks = append(blocks, block{file: "p/p.go", start: start, end: pos{start.line, start.col + len("x > 5")}, stmts: 0, count: 1})
	added, _ := widenPackage(f.pkg, blocks)
	require.Len(t, added, 3, "the block the profile has is not added again")
}

func TestSelect(t *testing.T) {
	t.Parallel()
	src := `package p

func sel(a, b chan int, v int) int {
	select {
	case a <- v + 1:
		return 1
	case x := <-(b):
		return x
	case <-a:
		return 3
	default:
		return 4
	}
}
`
	exprs := []string{"a <-", "v + 1", "(b)", "a:"}
	f := setup(t, src)
	require.Equal(t, set(), f.covered(f.widen(nil, "return 1", "return x"), exprs...))
	for _, ran := range []string{"return 1", "return x", "return 3", "return 4"} {
		require.Equal(t, set(exprs...), f.covered(f.widen([]string{ran}), exprs...), ran)
	}
	_, kinds := widenPackage(f.pkg, f.profile([]string{"return 4"}))
	require.Equal(t, map[string]int{kindSelect: 4}, kinds)
}

const constSrc = `package p

const (
	a = 2 * 3
	b = a + 1
	c = 10 - 1
	d = iota * 4
	e
)

const unused = 5 * 5

var v = c * 2

var fn, g = func() int { return 7 * 7 }, c + 1

const lim = 4 << 1

func use() int { return b + e }

func sw(x int) int {
	switch {
	case x > lim:
		return 1
	}
	return 0
}
`

func TestConstsAndVars(t *testing.T) {
	t.Parallel()
	needles := []string{"2 * 3", "a + 1", "10 - 1", "iota * 4", "5 * 5", "c * 2", "func()", "7 * 7", "c + 1", "4 << 1"}
	for name, tc := range map[string]struct {
		ran, notRan []string
		want        map[string]bool
	}{
		"nothing ran": {nil, []string{"return b + e", "return 1"}, set()},
		// use ran: b, and a through b, e and so d's value it repeats; the
		// package was initialised: the variables, and c through them.
		"use ran": {[]string{"return b + e"}, []string{"return 1"}, set("2 * 3", "a + 1", "iota * 4", "10 - 1", "c * 2", "c + 1")},
		// sw's case ran: lim is used in a case expression it covers.
		"case ran": {[]string{"return 1"}, []string{"return b + e"}, set("10 - 1", "c * 2", "c + 1", "x > lim", "4 << 1")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := setup(t, constSrc)
			all := append(needles, "x > lim")
			require.Equal(t, tc.want, f.covered(f.widen(tc.ran, tc.notRan...), all...))
		})
	}
}

func TestConstsCounted(t *testing.T) {
	t.Parallel()
	f := setup(t, constSrc)
	_, kinds := widenPackage(f.pkg, f.profile([]string{"return b + e"}))
	// a, b, c (in the initializers) and the iota value d and e share: four
	// constants' values; v's and g's initializers (fn's is a function
	// literal: nothing to add).
	require.Equal(t, map[string]int{kindConst: 4, kindVar: 2}, kinds)
}

func TestConstsWithoutTypes(t *testing.T) {
	t.Parallel()
	f := setup(t, constSrc)
	f.pkg.defs, f.pkg.uses = nil, nil
	got := f.covered(f.widen([]string{"return b + e"}), "2 * 3", "a + 1", "c * 2")
	require.Equal(t, set("c * 2"), got, "variables only")
}

func TestConstOtherFile(t *testing.T) {
	t.Parallel()
	// A constant used in a block of another file of the package.
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for name, src := range map[string]string{
		"a.go": "package p\n\nconst k = 3 * 3\n",
		"b.go": "package p\n\nfunc f() int {\n\treturn k\n}\n",
	} {
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		files[name] = f
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	_, err := (&types.Config{}).Check("p", fset, []*ast.File{files["a.go"], files["b.go"]}, info)
	require.NoError(t, err)
	src := source{importPath: "p", fset: fset, files: files, defs: info.Defs, uses: info.Uses}
	ran := block{file: "p/b.go", start: pos{3, 14}, end: pos{5, 2}, stmts: 1, count: 1}
	added, _ := widenPackage(src, []block{ran})
	require.Equal(t, []block{{file: "p/a.go", start: pos{3, 11}, end: pos{3, 16}, stmts: 0, count: 1}}, added)
	ran.count = 0
	added, _ = widenPackage(src, []block{ran})
	require.Empty(t, added)
}

func TestConstInALiteralThatDidNotRun(t *testing.T) {
	t.Parallel()
	f := setup(t, `package p

const q = 6 * 6

func outer(run bool) int {
	g := func() int { return q }
	if run {
		return g()
	}
	return 0
}
`)
	// The statement block around the literal ran, the literal's did not.
	require.Equal(t, set(), f.covered(f.widen([]string{"g := func() int { return q }\n\tif run {"}, "return q"), "6 * 6"))
	require.Equal(t, set("6 * 6"), f.covered(f.widen([]string{"g := func() int { return q }\n\tif run {", "return q"}), "6 * 6"))
}
