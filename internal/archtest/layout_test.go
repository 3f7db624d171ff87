package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The layout of issue 33: HTTP in app/api (and the dashboard in app/web),
// use cases in app/<feature> without HTTP, one composition root that only
// cmd and package app reach, and objects complete when made (no setters).
const (
	apiPkg = module + "/app/api"
	webPkg = module + "/app/web"
)

// httpClients are the packages under app/ outside the API tree that may
// import net/http, and why: they call other services over HTTP and serve
// nothing. Handlers belong in app/api/<feature> (or app/web for pages).
var httpClients = map[string]string{
	module + "/app/llm":          "a client of OpenAI-compatible model services (delivers over HTTP, as embed does)",
	module + "/app/voice/speech": "a client of OpenAI-compatible speech services (/audio/transcriptions, /audio/speech)",
}

// Handlers live only in the API tree: among the packages under app/, only
// app/api/... and app/web import net/http (their tests may use it as a
// client anywhere), save the outbound clients of httpClients. dial, embed
// and internal are not under app/ and may.
func TestHandlersOnlyInAPITree(t *testing.T) {
	for _, p := range listPackages(t) {
		if !under(p.ImportPath, appPkg) || under(p.ImportPath, apiPkg) || under(p.ImportPath, webPkg) {
			continue
		}
		for _, imp := range p.Imports {
			if imp == "net/http" && httpClients[p.ImportPath] == "" {
				t.Errorf("%s imports net/http: handlers go in app/api/<feature> (pages in app/web); "+
					"a package that only calls out over HTTP goes in httpClients with the reason", p.ImportPath)
			}
		}
	}
}

// The dashboard takes services, not stores: app/web and its packages
// (their non-test files) import nothing under storage/. What a page reads
// is a method of a feature (app/dashboard is the aggregates' read model),
// whose records it names through the feature (agents.Agent, ...). Its
// tests may open the stores to build the services.
func TestDashboardTakesServices(t *testing.T) {
	for _, p := range listPackages(t) {
		if !under(p.ImportPath, webPkg) {
			continue
		}
		for _, imp := range p.Imports {
			if under(imp, storagePkg) {
				t.Errorf("%s imports %s: the dashboard calls the features' services (web.Services), never a store", p.ImportPath, imp)
			}
		}
	}
}

// Only cmd reaches the composition root and package app: package app (its
// Open) opens app/features, cmd opens either; every other package is given
// the services it uses. Tests may open the features (features.Open is their
// entry point too), so only non-test imports count for app/features.
func TestCompositionRootOnlyFromCmd(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, imp := range p.Imports {
			if imp == featuresPkg && p.ImportPath != cmdPkg && p.ImportPath != appPkg {
				t.Errorf("%s imports %s: only cmd and package app may; take the services as constructor arguments", p.ImportPath, imp)
			}
		}
		for _, imp := range p.allImports() {
			if imp == appPkg && p.ImportPath != cmdPkg && p.ImportPath != appPkg {
				t.Errorf("%s imports %s: only cmd may", p.ImportPath, imp)
			}
		}
	}
}

// Package app is App{Open, Run, Close}: under 800 lines of its own
// (non-test) Go and under 10 test files; HTTP tests live in app/api.
func TestPackageAppIsSmall(t *testing.T) {
	for _, p := range listPackages(t) {
		if p.ImportPath != appPkg {
			continue
		}
		if n := countLines(t, p); n >= 800 {
			t.Errorf("package app has %d lines of non-test Go, limit 800: HTTP goes in app/api, features in app/<feature>", n)
		}
		tests, err := filepath.Glob(filepath.Join(p.Dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(tests) >= 10 {
			t.Errorf("package app has %d test files, limit 9: put HTTP tests in app/api (or the feature's package)", len(tests))
		}
		return
	}
	t.Fatalf("package %s not found", appPkg)
}

// setterName is a method name that reads as a setter: Use, UseTests,
// SetStore, Set ...
var setterName = regexp.MustCompile(`^(Use|Set)([A-Z].*)?$`)

// No setter injection: an object is complete when its constructor returns.
// The rule, precisely: in the non-test files of the packages under app/
// (handlers, the dashboard's site, the feature services and the
// composition root), no exported method named Use* or Set* assigns one of
// its parameters to a field reached from its receiver. A Set method that
// writes through a store (access's SetPassword) is not caught: it stores
// no dependency on the object. Outside app/ a Set method can be a flag's
// (flag.Value in cmd) or a test double's; the stores' UseSealer and
// sipdial's SetInbound are left to their own packages' owners.
func TestNoSetterInjection(t *testing.T) {
	for _, p := range listPackages(t) {
		if !under(p.ImportPath, appPkg) {
			continue
		}
		for _, name := range p.GoFiles {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			path := filepath.Join(p.Dir, name)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || fn.Body == nil || !fn.Name.IsExported() || !setterName.MatchString(fn.Name.Name) {
					continue
				}
				if injects(fn) {
					t.Errorf("%s: %s.%s stores a parameter in its receiver: pass the dependency to the constructor instead",
						fset.Position(fn.Pos()), p.ImportPath, fn.Name.Name)
				}
			}
		}
	}
}

// injects reports whether fn assigns one of its parameters (or a value
// built from one) to a field reached from its receiver.
func injects(fn *ast.FuncDecl) bool {
	if len(fn.Recv.List) == 0 || len(fn.Recv.List[0].Names) == 0 {
		return false
	}
	recv := fn.Recv.List[0].Names[0].Name
	params := map[string]bool{}
	for _, f := range fn.Type.Params.List {
		for _, n := range f.Names {
			params[n.Name] = true
		}
	}
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || found {
			return !found
		}
		for i, lhs := range as.Lhs {
			if !rootedAt(lhs, recv) || i >= len(as.Rhs) && len(as.Rhs) != 1 {
				continue
			}
			rhs := as.Rhs[min(i, len(as.Rhs)-1)]
			ast.Inspect(rhs, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && params[id.Name] {
					found = true
				}
				return !found
			})
		}
		return !found
	})
	return found
}

// rootedAt reports whether e is a field selector (x.a, x.a.b) on the
// identifier recv.
func rootedAt(e ast.Expr, recv string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	for {
		switch x := sel.X.(type) {
		case *ast.Ident:
			return x.Name == recv
		case *ast.SelectorExpr:
			sel = x
		default:
			return false
		}
	}
}
