package storage

import (
	"context"

	"github.com/agentd/agentd/storage/sqldb"
)

// ErrNotEmpty is returned (wrapped, naming the table) when the copy's
// target already holds rows.
var ErrNotEmpty = sqldb.ErrNotEmpty

// ErrCountMismatch is returned (wrapped) when the copied rows do not
// match the source's; nothing was committed.
var ErrCountMismatch = sqldb.ErrCountMismatch

// Copy copies every table of the SQLite database from into the empty
// PostgreSQL database to, in one transaction of to, and checks each
// table's rows on both sides before committing: the move from one file to
// a PostgreSQL server (agentd migrate-db). Nothing else may write to
// either database meanwhile. progress, if not nil, hears each table's
// running row count.
func Copy(ctx context.Context, from, to *Stores, progress func(table string, n int64)) (sqldb.CopyReport, error) {
	return sqldb.Copy(ctx, from.c, to.c, progress)
}

// PostgresName is host:port/database of a PostgreSQL URL, without the
// user, password or parameters: what may be printed of a URL that can
// hold a password.
func PostgresName(url string) string { return sqldb.PostgresName(url) }
