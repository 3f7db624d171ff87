package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// storageRootLimit is the most lines of non-test Go the package storage
// may hold: Open, the struct of stores and whole-database operations, no
// queries.
const storageRootLimit = 600

// parseDir parses the non-test Go files of one package.
func parseDir(t *testing.T, p pkg) []*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	var out []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// Storage is named stores, not a facade: no package under storage/ declares
// a type alias (a caller names the store that owns a type), and no struct
// anywhere embeds a store (a method is reached through the store's field,
// so a grep for it finds its SQL).
func TestStoresAreNamed(t *testing.T) {
	ps := listPackages(t)
	storeTypes := storeTypes(t, ps)
	if len(storeTypes) < 5 {
		t.Fatalf("found %d store types in storage.Stores", len(storeTypes))
	}
	for _, p := range ps {
		inStorage := under(p.ImportPath, storagePkg)
		for _, f := range parseDir(t, p) {
			pkgs := map[string]string{} // local name -> import path of storage packages
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				if under(path, storagePkg) {
					name := path[strings.LastIndex(path, "/")+1:]
					if imp.Name != nil {
						name = imp.Name.Name
					}
					pkgs[name] = path
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.TypeSpec:
					if inStorage && n.Assign.IsValid() {
						t.Errorf("%s: type alias %s: name the type where it is declared", p.ImportPath, n.Name.Name)
					}
				case *ast.StructType:
					for _, fd := range n.Fields.List {
						if len(fd.Names) > 0 {
							continue
						}
						typ := fd.Type
						if st, ok := typ.(*ast.StarExpr); ok {
							typ = st.X
						}
						if sel, ok := typ.(*ast.SelectorExpr); ok {
							if id, ok := sel.X.(*ast.Ident); ok && storeTypes[pkgs[id.Name]+"."+sel.Sel.Name] {
								t.Errorf("%s embeds %s.%s: hold the store in a named field", p.ImportPath, id.Name, sel.Sel.Name)
							}
						}
					}
				}
				return true
			})
		}
	}
}

// The package storage stays small: it opens the database and hands out
// the stores; every query lives in a store package.
func TestStorageRootSize(t *testing.T) {
	for _, p := range listPackages(t) {
		if p.ImportPath != storagePkg {
			continue
		}
		n := countLines(t, p)
		if n >= storageRootLimit {
			t.Errorf("%s has %d lines of non-test Go, over %d: move queries to a store package", p.ImportPath, n, storageRootLimit)
		}
		return
	}
	t.Fatal("package storage not found")
}

// storeTypes are the types of the fields of storage.Stores (and Stores
// itself), by import path and name.
func storeTypes(t *testing.T, ps []pkg) map[string]bool {
	t.Helper()
	out := map[string]bool{storagePkg + ".Stores": true}
	for _, p := range ps {
		if p.ImportPath != storagePkg {
			continue
		}
		for _, f := range parseDir(t, p) {
			imports := map[string]string{}
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				imports[path[strings.LastIndex(path, "/")+1:]] = path
			}
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok || ts.Name.Name != "Stores" {
					return true
				}
				for _, fd := range ts.Type.(*ast.StructType).Fields.List {
					if st, ok := fd.Type.(*ast.StarExpr); ok {
						if sel, ok := st.X.(*ast.SelectorExpr); ok {
							out[imports[sel.X.(*ast.Ident).Name]+"."+sel.Sel.Name] = true
						}
					}
				}
				return false
			})
		}
	}
	return out
}
