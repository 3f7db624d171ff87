package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

// migration is one numbered schema step, e.g. migrations/0003_kb.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrationDir is where a dialect's migrations live in the embedded
// files: the same numbers and names in both, one file per step.
func migrationDir(d Dialect) string {
	if d == Postgres {
		return "migrations/postgres"
	}
	return "migrations"
}

// loadMigrations reads dir/*.sql of fsys in version order.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	names, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		base := strings.TrimPrefix(n, dir+"/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("storage: migration %s: name must start with a number and '_'", base)
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{v, base, string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("storage: two migrations numbered %d", out[i].version)
		}
	}
	return out, nil
}

// migrate applies every migration not yet recorded, each in its own
// immediate transaction, so two processes starting at once apply each step
// exactly once.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := loadMigrations(db.migrations, migrationDir(db.dialect))
	if err != nil {
		return err
	}
	// Under the schema lock: two PostgreSQL processes creating it at once
	// would collide in the catalog.
	integer := "INTEGER" // SQLite's rowid alias
	if db.dialect == Postgres {
		integer = "BIGINT"
	}
	err = db.schemaWrite(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version `+integer+` PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("storage: create schema_migrations: %w", err)
	}
	for _, m := range ms {
		err := db.schemaWrite(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("storage: migration %s: %w", m.name, err)
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				m.version, m.name, time.Now().UnixMilli())
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// schemaWrite runs a migration step: on PostgreSQL at READ COMMITTED under
// the schema lock, so a step's statements see what another process's
// migration committed while this one waited.
func (db *DB) schemaWrite(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if db.dialect != Postgres {
		return db.writeOnce(ctx, nil, fn)
	}
	return db.writeOnce(ctx, nil, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", int64(schemaLockKey)); err != nil {
			return err
		}
		return fn(tx)
	})
}
