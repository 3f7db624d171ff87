package cmd

import (
	"context"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage"
)

// rotate-secret replaces the widget's signing key in the database, where
// every server process reads it.
func TestWidgetRotateSecret(t *testing.T) {
	dir := t.TempDir()
	read := func() string {
		t.Helper()
		db, err := storage.Open(context.Background(), dbtest.InDir(t, dir, "agentd.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		s, err := db.Widget.Secret(context.Background(), func() string { return "made-by-the-test" })
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := read()
	if out := run(t, dir, false, "widget", "rotate-secret"); out == "" {
		t.Fatal("no output")
	}
	second := read()
	if second == first || len(second) < 40 {
		t.Fatalf("key not rotated: %q then %q", first, second)
	}
	run(t, dir, false, "widget", "rotate-secret", "--json")
	if third := read(); third == second {
		t.Fatal("second rotation kept the key")
	}
}
