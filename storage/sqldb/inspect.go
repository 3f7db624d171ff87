package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// FileState is what agentd doctor reads from a database file without
// changing it: which migrations ran and the newest time written.
type FileState struct {
	Applied []int    // migration versions recorded in the file
	Pending []string // migrations of this binary not applied yet (serve applies them)
	Newer   []int    // versions recorded in the file that this binary does not know
	// NewestWrite is the latest time stored in the file (migrations,
	// organizations, users, keys, agents, calls); zero on an empty file.
	NewestWrite time.Time
}

// InspectFile reads the FileState of the database at path against the
// migrations of this binary. Unlike Open it
// creates nothing and applies no migration; a missing file is an error
// wrapping os.ErrNotExist.
func InspectFile(ctx context.Context, path string, migrations fs.FS) (FileState, error) {
	if _, err := os.Stat(path); err != nil {
		return FileState{}, fmt.Errorf("storage: %w", err)
	}
	db, err := sql.Open("sqlite", fileURI(path, "_pragma=busy_timeout(5000)&_pragma=query_only(1)"))
	if err != nil {
		return FileState{}, fmt.Errorf("storage: open %s: %w", path, err)
	}
	defer db.Close()
	var st FileState
	var tables int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").Scan(&tables); err != nil {
		return FileState{}, fmt.Errorf("storage: %s: %w", path, err)
	}
	recorded := map[int]bool{}
	if tables > 0 {
		rows, err := db.QueryContext(ctx, "SELECT version FROM schema_migrations ORDER BY version")
		if err != nil {
			return FileState{}, fmt.Errorf("storage: migrations: %w", err)
		}
		if st.Applied, err = Collect(rows, ScanOne[int]); err != nil {
			return FileState{}, err
		}
		for _, v := range st.Applied {
			recorded[v] = true
		}
	}
	ms, err := loadMigrations(migrations, migrationDir(SQLite))
	if err != nil {
		return FileState{}, err
	}
	known := map[int]bool{}
	for _, m := range ms {
		known[m.version] = true
		if !recorded[m.version] {
			st.Pending = append(st.Pending, m.name)
		}
	}
	for _, v := range st.Applied {
		if !known[v] {
			st.Newer = append(st.Newer, v)
		}
	}
	// The newest time stored, from the tables that exist.
	for _, q := range []string{
		"SELECT max(applied_at) FROM schema_migrations", "SELECT max(created_at) FROM orgs",
		"SELECT max(created_at) FROM users", "SELECT max(coalesce(revoked_at, created_at)) FROM api_keys",
		"SELECT max(updated_at) FROM agents", "SELECT max(updated_at) FROM calls",
	} {
		var v sql.NullInt64
		if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil {
			continue // a table this file does not have yet
		}
		if v.Valid && FromMS(v.Int64).After(st.NewestWrite) {
			st.NewestWrite = FromMS(v.Int64)
		}
	}
	return st, nil
}
