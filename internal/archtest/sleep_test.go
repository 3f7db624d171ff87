package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sleepName is the call counted, spelt so that this file's own text does
// not count in a grep of the tests for it.
const sleepName = "time." + "Sleep"

// sleepBudget is the most sleep calls the module's tests may hold
// (issue 33: under 40). A test waits on a condition (testkit.Eventually,
// Within, Never, a channel, the event stream) or runs in a testing/synctest
// bubble; a sleep is left only where a span of time is the test's input
// (a random kill moment, a period measured, fake time in a bubble).
const sleepBudget = 39

// Fixed sleeps do not grow back: every sleepName call in a _test.go file has
// a comment on its line or the line before saying why a wait on an event
// cannot do, and there are at most sleepBudget of them.
func TestSleepsInTestsAreFewAndExplained(t *testing.T) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	readSources(t, root)
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		commented := map[int]bool{} // lines a comment ends on
		for _, c := range f.Comments {
			for _, l := range c.List {
				commented[fset.Position(l.End()).Line] = true
			}
		}
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(x ast.Node) bool {
			call, ok := x.(*ast.CallExpr)
			if !ok || !isTimeSleep(call.Fun) {
				return true
			}
			n++
			line := fset.Position(call.Pos()).Line
			if !commented[line] && !commented[line-1] {
				t.Errorf("%s:%d: %s without a comment saying why a wait on the condition cannot do "+
					"(testkit.Eventually/Within/Never, a channel, synctest)", rel, line, sleepName)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n > sleepBudget {
		t.Errorf("%d %s calls in tests, budget %d: wait on the condition instead", n, sleepName, sleepBudget)
	}
	if n == 0 {
		t.Fatalf("found no %s at all: the walk is broken", sleepName)
	}
	t.Logf("%d %s calls in tests (budget %d)", n, sleepName, sleepBudget)
}

// isTimeSleep reports whether fun is the sleepName function.
func isTimeSleep(fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Sleep" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "time"
}
