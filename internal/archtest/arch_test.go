package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/agentd/agentd"

// Packages named by the rules.
const (
	appPkg     = module + "/app"
	cmdPkg     = module + "/cmd"
	storagePkg = module + "/storage"
	searchPkg  = module + "/storage/search"
	sqldbPkg   = module + "/storage/sqldb"
)

// storeImports are the agentd packages a store under storage/ may import
// besides storage/sqldb (the connection every store shares), and why. The
// facade (package storage) imports the stores, never the reverse.
var storeImports = map[string][]string{
	module + "/storage/dashstore": {module + "/storage/callstore"}, // the call statuses it aggregates
	// Both queue the analysis in the transaction that ends a call or a
	// conversation (analysisstore.Enqueue*), so a crash never loses one.
	module + "/storage/callstore": {module + "/storage/analysisstore"},
	// A call's conversation turn appends its transcript lines
	// (callstore.AppendTranscriptTx) in the turn's own transaction.
	module + "/storage/convstore": {module + "/storage/analysisstore", module + "/storage/callstore"},
	// Chunk vectors are written in the knowledge transaction; the keyword
	// documents it loads are search.TextDoc.
	module + "/storage/kbstore": {module + "/storage/vectorstore", searchPkg},
	// Listing vectors are written in the sync transaction; the store keeps
	// the keyword mirror of listings (search.TextIndex).
	module + "/storage/listingstore": {module + "/storage/vectorstore", searchPkg},
	// The change log implements search.ChangeLog and loads search.VectorSpace.
	module + "/storage/vectorstore": {searchPkg},
}

// pkg is what `go list -json` says about one package.
type pkg struct {
	ImportPath     string
	Dir            string
	GoFiles        []string
	IgnoredGoFiles []string // other platforms' files (epoch_other.go ...)
	Imports        []string
	TestImports    []string
	XTestImports   []string
}

// allImports is what the package imports, its tests included.
func (p pkg) allImports() []string {
	return slices.Concat(p.Imports, p.TestImports, p.XTestImports)
}

// under reports whether path is the package prefix or one below it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// listPackages runs go list on every package of the module.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	readSources(t, root)
	c := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,IgnoredGoFiles,Imports,TestImports,XTestImports", "./...")
	c.Dir = root
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var ps []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if len(ps) < 5 {
		t.Fatalf("go list found %d packages", len(ps))
	}
	return ps
}

// readSources reads every folder and Go file of the module: go test caches
// a result with the files the test opened, so a changed import, file or
// package makes these tests run again instead of replaying a pass.
func readSources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			_, err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Imports point inward: cmd -> app -> app/<feature> -> storage/search,
// embed, dial -> storage.
func TestImportsPointInward(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, imp := range p.allImports() {
			// Nothing imports the HTTP layer but the CLI (and app's own
			// external tests).
			if imp == appPkg && p.ImportPath != cmdPkg && p.ImportPath != appPkg {
				t.Errorf("%s imports %s: only cmd may", p.ImportPath, appPkg)
			}
		}
		for _, imp := range p.Imports {
			// cmd's own sub-packages (cmd/cliflags, the flags' reading) serve cmd.
			if under(imp, cmdPkg) && p.ImportPath != module && !(under(p.ImportPath, cmdPkg) && imp != cmdPkg) {
				t.Errorf("%s imports %s: only main may", p.ImportPath, imp)
			}
			switch {
			case under(p.ImportPath, appPkg) && p.ImportPath != appPkg:
				// Feature packages: their rules, no HTTP.
				if imp == appPkg || under(imp, cmdPkg) {
					t.Errorf("feature package %s imports %s", p.ImportPath, imp)
				}
			case p.ImportPath == searchPkg:
				// The search engine knows no SQL and no feature.
				for _, bad := range []string{appPkg, cmdPkg, storagePkg, module + "/dial"} {
					if imp == bad || (bad != storagePkg && under(imp, bad)) {
						t.Errorf("%s imports %s", p.ImportPath, imp)
					}
				}
			case under(p.ImportPath, storagePkg):
				// SQL and persistence only.
				for _, bad := range []string{appPkg, cmdPkg, module + "/dial", module + "/embed"} {
					if under(imp, bad) {
						t.Errorf("%s imports %s", p.ImportPath, imp)
					}
				}
				// The connection imports no agentd package; a store only
				// the connection (and what storeImports allows).
				if p.ImportPath != storagePkg && under(imp, module) {
					if p.ImportPath == sqldbPkg || (imp != sqldbPkg && !slices.Contains(storeImports[p.ImportPath], imp)) {
						t.Errorf("%s imports %s: a store imports only %s (see storeImports)", p.ImportPath, imp, sqldbPkg)
					}
				}
			case under(p.ImportPath, module+"/dial") || under(p.ImportPath, module+"/embed"):
				if under(imp, appPkg) || under(imp, cmdPkg) {
					t.Errorf("%s imports %s", p.ImportPath, imp)
				}
			}
		}
	}
}

// pendingShrink are packages over their limit that a branch in flight is
// making smaller (none now: storage's stores moved to sub-packages).
// AGENTD_ARCH_STRICT=1 applies the limits to them anyway.
var pendingShrink = map[string]bool{}

// Packages stay small: no package's non-test Go code over 3,000 lines,
// the HTTP layer (package app, its own files) included.
func TestPackageSizes(t *testing.T) {
	strict := os.Getenv("AGENTD_ARCH_STRICT") == "1"
	for _, p := range listPackages(t) {
		limit := 3000
		n := countLines(t, p)
		name := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if name == "" {
			name = "main"
		}
		t.Run(name, func(t *testing.T) {
			t.Logf("%s: %d lines of non-test Go (limit %d)", p.ImportPath, n, limit)
			switch {
			case n <= limit:
			case pendingShrink[p.ImportPath] && !strict:
				t.Skipf("TODO(lead): %s has %d lines, over its limit of %d, while other branches shrink it; "+
					"AGENTD_ARCH_STRICT=1 fails here", p.ImportPath, n, limit)
			default:
				t.Errorf("%s has %d lines of non-test Go, over the limit of %d: split it", p.ImportPath, n, limit)
			}
		})
	}
}

// countLines counts the lines of a package's non-test Go files, other
// platforms' included.
func countLines(t *testing.T, p pkg) int {
	t.Helper()
	n := 0
	for _, f := range slices.Concat(p.GoFiles, p.IgnoredGoFiles) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(p.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte("\n"))
	}
	return n
}
