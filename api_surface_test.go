package robotexec_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// publicSurface bounds the exported identifiers of the packages a program
// imports: what a user reads in go doc and must learn.
const publicSurface = 304

// apiPackages are the packages a program imports: every package of the
// module but internal ones, commands, and the examples (programs and node
// types to read and copy, not to import).
func apiPackages(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		switch {
		case path == "internal", path == "cmd", path == "examples", d.Name() == "testdata", path != "." && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		}
		if matches, _ := filepath.Glob(filepath.Join(path, "*.go")); len(matches) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// exported lists the exported identifiers of the package in dir: its
// types, funcs, methods, struct fields, consts and vars, and each type
// alias, whose methods a user would call too.
func exported(t *testing.T, dir string) (names, aliases []string) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		d := doc.New(p, dir, 0)
		add := func(name string) { names = append(names, dir+"."+name) }
		values := func(vs []*doc.Value) {
			for _, v := range vs {
				for _, n := range v.Names {
					add(n)
				}
			}
		}
		values(d.Consts)
		values(d.Vars)
		for _, f := range d.Funcs {
			add(f.Name)
		}
		for _, ty := range d.Types {
			add(ty.Name)
			values(ty.Consts)
			values(ty.Vars)
			for _, f := range ty.Funcs {
				add(f.Name)
			}
			for _, m := range ty.Methods {
				add(ty.Name + "." + m.Name)
			}
			spec := ty.Decl.Specs[0].(*ast.TypeSpec)
			if spec.Assign.IsValid() {
				aliases = append(aliases, dir+"."+ty.Name)
			}
			switch st := spec.Type.(type) {
			case *ast.StructType:
				for _, f := range st.Fields.List {
					for _, n := range f.Names {
						if n.IsExported() {
							add(ty.Name + "." + n.Name)
						}
					}
				}
			case *ast.InterfaceType:
				for _, f := range st.Methods.List {
					for _, n := range f.Names {
						add(ty.Name + "." + n.Name)
					}
				}
			}
		}
	}
	return names, aliases
}

// TestPublicSurface: the public packages define their own types (no type
// alias, whose methods go doc would not show), and export at most
// publicSurface identifiers in all.
func TestPublicSurface(t *testing.T) {
	t.Parallel()
	var all, aliases []string
	per := map[string]int{}
	for _, dir := range apiPackages(t) {
		names, as := exported(t, dir)
		all = append(all, names...)
		aliases = append(aliases, as...)
		per[dir] = len(names)
	}
	if len(aliases) > 0 {
		t.Errorf("type aliases in public packages: %v", aliases)
	}
	dirs := make([]string, 0, len(per))
	for d := range per {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		t.Logf("%-16s %3d", d, per[d])
	}
	if len(all) > publicSurface {
		t.Errorf("%d exported identifiers in the public packages, over %d", len(all), publicSurface)
	}
	if len(all) < 100 {
		t.Errorf("only %d exported identifiers found: the walk missed packages (%v)", len(all), dirs)
	}
}
