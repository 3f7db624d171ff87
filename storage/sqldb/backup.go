package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrInUse is returned by Restore when another connection (a running
// agentd serve, the CLI, litestream, the sqlite3 shell) has the target
// database open: overwriting it under them would corrupt what they see.
var ErrInUse = errors.New("database is open in another process")

// Backup writes a consistent copy of the database at src to dst with
// VACUUM INTO, then checks the copy with PRAGMA integrity_check. It works
// while a server writes to src: VACUUM INTO reads one snapshot (a WAL read
// transaction, which blocks no writer), so the copy holds every transaction
// committed before it started and none after. The copy is written under a
// temporary name and renamed into place only once it passed the check, so
// dst never names a partial or damaged file. dst must not exist.
func Backup(ctx context.Context, src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("storage: backup source: %w", err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("storage: backup target %s exists; choose a new file name", dst)
	}
	tmp := dst + ".tmp"
	os.Remove(tmp)
	// VACUUM INTO fills an empty file: made here, it is the owner's only.
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	f.Close()
	// Not query_only: SQLite counts VACUUM INTO as a write, although
	// it only reads src.
	db, err := sql.Open("sqlite", fileURI(src, "_pragma=busy_timeout(5000)"))
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	_, err = db.ExecContext(ctx, "VACUUM INTO ?", tmp)
	db.Close()
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("storage: backup: %w", err)
	}
	if err := CheckFile(ctx, tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := syncFile(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("storage: backup: %w", err)
	}
	return syncDir(filepath.Dir(dst))
}

// CheckFile runs PRAGMA integrity_check on the SQLite file at path (which
// must exist) and returns an error carrying the first problems it found.
func CheckFile(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("storage: integrity check: %w", err)
	}
	db, err := sql.Open("sqlite", fileURI(path, "_pragma=busy_timeout(5000)&_pragma=query_only(1)"))
	if err != nil {
		return fmt.Errorf("storage: integrity check: %w", err)
	}
	defer db.Close()
	return integrity(ctx, db)
}

// integrity runs PRAGMA integrity_check on db and turns anything but "ok"
// into an error (the first five messages).
func integrity(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) error {
	rows, err := q.QueryContext(ctx, "PRAGMA integrity_check(5)")
	if err != nil {
		return fmt.Errorf("storage: integrity check: %w", err)
	}
	msgs, err := Collect(rows, ScanOne[string])
	if err != nil {
		return fmt.Errorf("storage: integrity check: %w", err)
	}
	if len(msgs) == 1 && msgs[0] == "ok" {
		return nil
	}
	return fmt.Errorf("storage: integrity check failed: %s", strings.Join(msgs, "; "))
}

// Restore replaces the database at dst with the backup at src, after
// checking src with PRAGMA integrity_check.
//
// It refuses with ErrInUse while any other connection has dst open. The
// check is SQLite's own locking, so it sees every process on this machine
// that uses the file (agentd serve, the CLI, litestream, the sqlite3 shell)
// and leaves no lock file behind after a crash: in WAL mode every open
// connection holds a SHARED lock on the database file for as long as it is
// open, and Restore opens dst with locking_mode=EXCLUSIVE and no busy wait,
// which needs an EXCLUSIVE lock and so fails at once if anyone else is
// there. Restore then keeps that lock while it copies src page by page into
// dst with SQLite's backup API, so a server started meanwhile waits and
// then fails with "database is locked" instead of seeing half a restore.
// Network file systems whose locks are unreliable defeat this, as they
// defeat SQLite itself.
func Restore(ctx context.Context, src, dst string) (err error) {
	if err := CheckFile(ctx, src); err != nil {
		return fmt.Errorf("backup %s: %w", src, err)
	}
	if err := ownerOnly(dst); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", fileURI(dst, "_pragma=busy_timeout(0)&_pragma=locking_mode(EXCLUSIVE)"))
	if err != nil {
		return fmt.Errorf("storage: restore: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return lockErr(err)
	}
	defer conn.Close()
	// The first write takes the EXCLUSIVE lock (also on a database in
	// WAL mode, which in this locking mode uses no shared memory).
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE; COMMIT"); err != nil {
		return lockErr(err)
	}
	err = conn.Raw(func(dc any) error {
		r, ok := dc.(interface {
			NewRestore(string) (*sqlite.Backup, error)
		})
		if !ok {
			return errors.New("storage: restore: the SQLite driver has no backup API")
		}
		b, err := r.NewRestore(fileURI(src, "mode=ro"))
		if err != nil {
			return err
		}
		for {
			more, err := b.Step(1024)
			if err != nil {
				b.Finish()
				return err
			}
			if !more {
				break
			}
		}
		return b.Finish()
	})
	if err != nil {
		return fmt.Errorf("storage: restore: %w", lockErr(err))
	}
	if err := integrity(ctx, conn); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
		return fmt.Errorf("storage: restore: %w", err)
	}
	return nil
}

// lockErr maps SQLite's busy and locked answers to ErrInUse.
func lockErr(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return ErrInUse
		}
	}
	return err
}

// fileURI is the driver DSN of the file at path with query parameters.
func fileURI(path, query string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + query
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	return nil
}

// syncDir makes a rename in dir durable; file systems that cannot sync a
// directory are not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	d.Sync()
	return nil
}
