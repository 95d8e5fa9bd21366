package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"path"
)

// constsAndVars applies the constant and variable rules (package doc) to the
// package-level declarations of the files (base names, sorted). pkgRan: a
// block of the package ran, so the package was initialised.
func (w *widener) constsAndVars(names []string, pkgRan bool) {
	// value[obj]: the expression a package-level constant's value comes
	// from (a constant without one in a group repeats the previous one's),
	// and the file it is in.
	type valueExpr struct {
		file string
		expr ast.Expr
	}
	value := map[types.Object]valueExpr{}
	var varInits []valueExpr
	for _, name := range names {
		file := path.Join(w.src.importPath, name)
		for _, d := range w.src.files[name].Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR && gd.Tok != token.CONST {
				continue
			}
			var last []ast.Expr
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if gd.Tok == token.VAR {
					for _, e := range vs.Values {
						varInits = append(varInits, valueExpr{file, e})
					}
					continue
				}
				if vs.Values != nil {
					last = vs.Values
				}
				for i, id := range vs.Names {
					if obj := w.objectOf(id); obj != nil && i < len(last) {
						value[obj] = valueExpr{file, last[i]}
					}
				}
			}
		}
	}
	if pkgRan {
		for _, v := range varInits {
			w.file = v.file
			w.add(kindVar, v.expr)
		}
	}
	if w.src.uses == nil {
		return
	}
	// A use makes a constant live when the innermost block around it ran
	// (the initializers of an initialised package are blocks that ran by
	// now, their function literals left out), or when it is in a live
	// constant's value.
	live := map[types.Object]bool{}
	var mark func(obj types.Object)
	mark = func(obj types.Object) {
		v, ok := value[obj]
		if !ok || live[obj] {
			return
		}
		live[obj] = true
		ast.Inspect(v.expr, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				mark(w.src.uses[id])
			}
			return true
		})
	}
	for id, obj := range w.src.uses {
		if _, ok := value[obj]; !ok || live[obj] {
			continue
		}
		if w.useRan(id) {
			mark(obj)
		}
	}
	// Add each live value once, in source order (constants repeating a
	// value share it).
	done := map[ast.Expr]bool{}
	for _, name := range names {
		file := path.Join(w.src.importPath, name)
		for _, d := range w.src.files[name].Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					obj := w.objectOf(id)
					if v := value[obj]; live[obj] && !done[v.expr] {
						done[v.expr] = true
						w.file = file
						w.add(kindConst, v.expr)
					}
				}
			}
		}
	}
}

func (w *widener) objectOf(id *ast.Ident) types.Object {
	if w.src.defs == nil {
		return nil
	}
	return w.src.defs[id]
}

// useRan reports whether the innermost block around the identifier ran: a
// block of the profile or an expression added before as evaluated. (A block
// of a statement holding a function literal spans the literal's own blocks,
// which may not have run.)
func (w *widener) useRan(id *ast.Ident) bool {
	tf := w.src.fset.File(id.Pos())
	file := path.Join(w.src.importPath, path.Base(tf.Name()))
	at := w.position(id.Pos())
	var inner *block
	for _, list := range [][]block{w.all, w.added} {
		for i, b := range list {
			if b.file == file && !at.before(b.start) && at.before(b.end) && (inner == nil || inner.start.before(b.start)) {
				inner = &list[i]
			}
		}
	}
	return inner != nil && inner.count > 0
}
