package doccheck_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryExportedNameIsDocumented parses every package of the module
// (tests excluded) and reports each missing package comment and each
// exported declaration without a doc comment.
func TestEveryExportedNameIsDocumented(t *testing.T) {
	root := filepath.Join("..", "..")
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 4 {
		t.Fatalf("found only %d packages under %s", len(dirs), root)
	}
	for dir := range dirs {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			p := doc.New(pkg, dir, 0)
			if strings.TrimSpace(p.Doc) == "" {
				t.Errorf("%s: package %s has no package comment", dir, p.Name)
			}
			check := func(kind, name, text string, pos token.Pos) {
				if ast.IsExported(name) && strings.TrimSpace(text) == "" {
					t.Errorf("%s: %s %s has no doc comment", fset.Position(pos), kind, name)
				}
			}
			for _, f := range p.Funcs {
				check("func", f.Name, f.Doc, f.Decl.Pos())
			}
			for _, v := range append(p.Consts, p.Vars...) {
				if strings.TrimSpace(v.Doc) == "" {
					for _, spec := range v.Decl.Specs {
						vs := spec.(*ast.ValueSpec)
						for _, n := range vs.Names {
							if vs.Doc == nil && vs.Comment == nil {
								check("value", n.Name, "", n.Pos())
							}
						}
					}
				}
			}
			for _, typ := range p.Types {
				check("type", typ.Name, typ.Doc, typ.Decl.Pos())
				for _, f := range append(typ.Funcs, typ.Methods...) {
					check("func", typ.Name+"."+f.Name, f.Doc, f.Decl.Pos())
				}
				for _, v := range append(typ.Consts, typ.Vars...) {
					if strings.TrimSpace(v.Doc) != "" {
						continue
					}
					for _, spec := range v.Decl.Specs {
						vs := spec.(*ast.ValueSpec)
						for _, n := range vs.Names {
							if vs.Doc == nil && vs.Comment == nil {
								check("value", n.Name, "", n.Pos())
							}
						}
					}
				}
			}
		}
	}
}
