package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"path"
	"sort"
)

// Kinds of expression mutatecover adds blocks for, as counted in its log line.
const (
	kindCase   = "case"
	kindSelect = "select"
	kindConst  = "const"
	kindVar    = "var"
)

// source is one package to widen: its files parsed with fset, keyed by base
// name, and the objects its identifiers define and use (nil leaves
// constants out).
type source struct {
	importPath string
	fset       *token.FileSet
	files      map[string]*ast.File
	defs       map[*ast.Ident]types.Object
	uses       map[*ast.Ident]types.Object
}

// widener collects, for one package, the blocks to add to the profile.
type widener struct {
	src   source
	ran   map[string][]block // per profile file name, the blocks with a count above 0
	all   []block            // the profile's blocks of the package
	seen  map[[2]pos]bool    // per file below: blocks already in the profile
	added []block
	kinds map[string]int
	file  string // profile file name of the file being walked
}

// widenPackage returns the blocks to add for src, given the profile's blocks
// of its files (all of them, count 0 or not), and how many expressions of each
// kind they cover.
func widenPackage(src source, existing []block) ([]block, map[string]int) {
	w := &widener{src: src, ran: map[string][]block{}, all: existing, kinds: map[string]int{}}
	inProfile := map[string]bool{}
	pkgRan := false
	for _, b := range existing {
		inProfile[b.file] = true
		if b.count > 0 {
			w.ran[b.file] = append(w.ran[b.file], b)
			pkgRan = true
		}
	}
	names := make([]string, 0, len(src.files))
	for name := range src.files {
		names = append(names, name)
	}
	sort.Strings(names)
	w.seen = map[[2]pos]bool{}
	for _, name := range names {
		w.file = path.Join(src.importPath, name)
		for _, b := range existing {
			if b.file == w.file {
				w.seen[[2]pos{b.start, b.end}] = true
			}
		}
		w.walkControl(src.files[name])
	}
	w.constsAndVars(names, pkgRan)
	return w.added, w.kinds
}

func (w *widener) position(p token.Pos) pos {
	tp := w.src.fset.Position(p)
	return pos{tp.Line, tp.Column}
}

// ranFrom reports whether a block that ran starts in [from, to).
func (w *widener) ranFrom(from, to token.Pos) bool {
	f, t := w.position(from), w.position(to)
	for _, b := range w.ran[w.file] {
		if !b.start.before(f) && b.start.before(t) {
			return true
		}
	}
	return false
}

// ranAt reports whether a block that ran starts at p.
func (w *widener) ranAt(p token.Pos) bool {
	at := w.position(p)
	for _, b := range w.ran[w.file] {
		if b.start == at {
			return true
		}
	}
	return false
}

// add adds blocks covering e in the current file, leaving out the function
// literals inside it (they have blocks of their own), and counts e under
// kind when it added one.
func (w *widener) add(kind string, e ast.Node) {
	before := len(w.added)
	from := e.Pos()
	ast.Inspect(e, func(n ast.Node) bool {
		lit, ok := n.(*ast.FuncLit)
		if !ok {
			return true
		}
		w.addSpan(from, lit.Pos())
		from = lit.End()
		return false
	})
	w.addSpan(from, e.End())
	if len(w.added) > before {
		w.kinds[kind]++
	}
}

func (w *widener) addSpan(from, to token.Pos) {
	if from >= to {
		return
	}
	k := [2]pos{w.position(from), w.position(to)}
	if w.seen[k] {
		return
	}
	w.seen[k] = true
	w.added = append(w.added, block{file: w.file, start: k[0], end: k[1], stmts: 0, count: 1})
}

// walkControl finds the switch and select statements of f and adds their
// expressions that the profile proves were evaluated.
func (w *widener) walkControl(f *ast.File) {
	next := nextStatements(f)
	ast.Inspect(f, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.SwitchStmt:
			w.switchClauses(s.Body, next[s])
		case *ast.TypeSwitchStmt:
			w.switchClauses(s.Body, next[s])
		case *ast.SelectStmt:
			w.selectClauses(s)
		}
		return true
	})
}

// nextStatements maps each switch statement of f to the statement that
// follows it in its list, when there is one and it is not labeled (a label
// can be reached by goto without passing the switch).
func nextStatements(f *ast.File) map[ast.Stmt]ast.Stmt {
	next := map[ast.Stmt]ast.Stmt{}
	record := func(list []ast.Stmt) {
		for i := 0; i+1 < len(list); i++ {
			if _, labeled := list[i+1].(*ast.LabeledStmt); labeled {
				continue
			}
			s := list[i]
			if l, ok := s.(*ast.LabeledStmt); ok {
				s = l.Stmt
			}
			next[s] = list[i+1]
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.BlockStmt:
			record(s.List)
		case *ast.CaseClause:
			record(s.Body)
		case *ast.CommClause:
			record(s.Body)
		}
		return true
	})
	return next
}

// switchClauses applies the case rule (package doc) to one expression or
// type switch. Go evaluates the case expressions of the clauses that are not
// default top to bottom, left to right, until one matches.
func (w *widener) switchClauses(body *ast.BlockStmt, after ast.Stmt) {
	clauses := make([]*ast.CaseClause, len(body.List))
	for i, c := range body.List {
		clauses[i] = c.(*ast.CaseClause)
	}
	// matched[i]: clause i's body ran after its case matched (entered
	// other than by the previous clause's fallthrough).
	matched := make([]bool, len(clauses))
	for i, c := range clauses {
		end := body.Rbrace
		if i+1 < len(clauses) {
			end = clauses[i+1].Case
		}
		ran := w.ranFrom(c.Colon+1, end)
		matched[i] = ran && !(i > 0 && fallsThrough(clauses[i-1]) && w.ranFrom(clauses[i-1].Colon+1, c.Case))
	}
	all := false // every case expression was evaluated at least once
	for i, c := range clauses {
		if c.List == nil && matched[i] {
			all = true
		}
	}
	if !all && after != nil && w.ranAt(after.Pos()) && noneLeaves(clauses) {
		all = true
	}
	laterMatched := false
	for i := len(clauses) - 1; i >= 0; i-- {
		c := clauses[i]
		if c.List == nil {
			continue
		}
		switch {
		case all || laterMatched:
			for _, e := range c.List {
				w.add(kindCase, e)
			}
		case matched[i]:
			w.add(kindCase, c.List[0])
		}
		if matched[i] {
			laterMatched = true
		}
	}
}

func fallsThrough(c *ast.CaseClause) bool {
	if len(c.Body) == 0 {
		return false
	}
	b, ok := c.Body[len(c.Body)-1].(*ast.BranchStmt)
	return ok && b.Tok == token.FALLTHROUGH
}

// noneLeaves reports whether control can pass a switch with these clauses only when no
// clause matched: s has no default, and every clause's body ends in a return,
// a call of panic or a continue, with no break out of the switch and no goto.
func noneLeaves(clauses []*ast.CaseClause) bool {
	for _, c := range clauses {
		if c.List == nil || len(c.Body) == 0 || !terminates(c.Body[len(c.Body)-1]) {
			return false
		}
		for _, st := range c.Body {
			if breaksOut(st, false) {
				return false
			}
		}
	}
	return true
}

func terminates(st ast.Stmt) bool {
	switch st := st.(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return st.Tok == token.CONTINUE
	case *ast.ExprStmt:
		call, ok := st.X.(*ast.CallExpr)
		if !ok {
			return false
		}
		id, ok := call.Fun.(*ast.Ident)
		return ok && id.Name == "panic"
	}
	return false
}

// breaksOut reports whether n holds a goto, or a break that can end the
// switch n is in: an unlabeled break outside any loop, switch or select
// nested in n (inner: n is inside one), or any labeled break (conservatively:
// it may name the switch).
func breaksOut(n ast.Node, inner bool) bool {
	found := false
	ast.Inspect(n, func(m ast.Node) bool {
		if found {
			return false
		}
		switch m := m.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			if !inner {
				found = breaksOut(m, true)
				return false
			}
		case *ast.BranchStmt:
			found = m.Tok == token.GOTO || m.Tok == token.BREAK && (m.Label != nil || !inner)
		}
		return true
	})
	return found
}

// selectClauses applies the select rule (package doc): when the body of any
// clause ran, every case's channel and value expressions were evaluated.
func (w *widener) selectClauses(s *ast.SelectStmt) {
	if !w.ranFrom(s.Body.Lbrace, s.Body.Rbrace) {
		return
	}
	for _, c := range s.Body.List {
		switch comm := c.(*ast.CommClause).Comm.(type) {
		case *ast.SendStmt:
			w.add(kindSelect, comm.Chan)
			w.add(kindSelect, comm.Value)
		case *ast.ExprStmt:
			w.addRecv(comm.X)
		case *ast.AssignStmt:
			w.addRecv(comm.Rhs[0])
		}
	}
}

func (w *widener) addRecv(e ast.Expr) {
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
		w.add(kindSelect, u.X)
	}
}
