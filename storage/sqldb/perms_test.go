//go:build unix

package sqldb

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/fstest"
)

// The database, its WAL and shared-memory files and a backup are readable
// by their owner only (issue 27 item 9: they were 0644, secrets included),
// whatever the umask; a file an older version left 0644 is tightened when
// it is opened.
func TestFilesAreOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "agentd.db")
	mig := fstest.MapFS{"migrations/0001_t.sql": {Data: []byte("CREATE TABLE t (x TEXT);")}}
	db, err := Open(ctx, path, mig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, "INSERT INTO t VALUES ('secret')"); err != nil {
		t.Fatal(err)
	}
	check := func(p string) {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want -rw-------", filepath.Base(p), fi.Mode().Perm())
		}
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		check(p)
	}
	bak := filepath.Join(dir, "backup.db")
	if err := Backup(ctx, path, bak); err != nil {
		t.Fatal(err)
	}
	check(bak)
	db.Close()

	// A database an older version made 0644 is tightened on open.
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Chmod(p, 0o644)
	}
	db, err = Open(ctx, path, mig)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check(path)
	if _, err := os.Stat(path + "-wal"); err == nil {
		check(path + "-wal")
	}
}
