package archtest

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// cmdDoor is the one file of cmd that opens the database: the feature set
// of app/features (workers off) and the whole-database operations.
const cmdDoor = "db.go"

// One front door for the CLI: no file of cmd but cmdDoor imports a package
// under storage/. Every other command calls the features the HTTP handlers
// call (tests may use the testkit helpers and stores to check results).
func TestCLIFrontDoor(t *testing.T) {
	for _, p := range listPackages(t) {
		if p.ImportPath != cmdPkg {
			continue
		}
		fset := token.NewFileSet()
		for _, name := range p.GoFiles {
			if name == cmdDoor {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if path := strings.Trim(imp.Path.Value, `"`); under(path, storagePkg) {
					t.Errorf("cmd/%s imports %s: open the feature set through cmd/%s and call the features", name, path, cmdDoor)
				}
			}
		}
		return
	}
	t.Fatal("package cmd not found")
}

// featuresPkg is the composition root: it opens the stores and hands each
// feature the ones it uses.
const featuresPkg = module + "/app/features"

// pendingStores are the packages that still take the whole *storage.Stores
// instead of the stores they use, and why; the list only shrinks.
var pendingStores = map[string]string{
	module + "/internal/testkit/storetest": "opens the stores for the store packages' own tests",
}

// Features take only the stores they use: the package storage (the struct
// of every store) is imported by the composition root, storage's own
// packages, cmd's door and the tests; a feature package imports the store
// packages it uses, and gets them through its Deps.
func TestFeaturesTakeTheirStores(t *testing.T) {
	for _, p := range listPackages(t) {
		switch {
		case p.ImportPath == featuresPkg, p.ImportPath == cmdPkg, under(p.ImportPath, storagePkg):
			continue // cmd: TestCLIFrontDoor keeps it to one file
		}
		for _, imp := range p.Imports {
			if imp != storagePkg {
				continue
			}
			if why := pendingStores[p.ImportPath]; why != "" {
				t.Logf("TODO(arch): %s still imports %s: %s", p.ImportPath, storagePkg, why)
				continue
			}
			t.Errorf("%s imports %s: take the stores the package uses (a Deps struct of named stores) and let %s pass them",
				p.ImportPath, storagePkg, featuresPkg)
		}
	}
}
