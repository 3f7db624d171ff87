package sqldb

import (
	"context"
	"database/sql/driver"
)

// pgConnector hands database/sql connections of pgx's stdlib driver,
// wrapped so the stores' SQLite-style queries run unchanged: placeholders
// are renumbered (pgrewrite.go) and bool arguments become 0/1, since both
// schemas store flags as integers.
type pgConnector struct{ c driver.Connector }

func (p pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := p.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{c}, nil
}

func (p pgConnector) Driver() driver.Driver { return p.c.Driver() }

// pgConn is one pgx connection; every optional interface database/sql
// uses is passed through.
type pgConn struct{ c driver.Conn }

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.c.Prepare(pgQuery(query))
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.c.(driver.ConnPrepareContext).PrepareContext(ctx, pgQuery(query))
}

func (c *pgConn) Close() error { return c.c.Close() }

//lint:ignore SA1019 required by driver.Conn
func (c *pgConn) Begin() (driver.Tx, error) { return c.c.Begin() } //nolint:staticcheck

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.c.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.c.(driver.ExecerContext).ExecContext(ctx, pgQuery(query), args)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.c.(driver.QueryerContext).QueryContext(ctx, pgQuery(query), args)
}

func (c *pgConn) Ping(ctx context.Context) error { return c.c.(driver.Pinger).Ping(ctx) }

func (c *pgConn) ResetSession(ctx context.Context) error {
	if r, ok := c.c.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *pgConn) IsValid() bool {
	if v, ok := c.c.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// CheckNamedValue stores bools as SQLite does (1/0) and passes the rest
// to pgx, which encodes Go values itself.
func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	switch v := nv.Value.(type) {
	case bool:
		if v {
			nv.Value = int64(1)
		} else {
			nv.Value = int64(0)
		}
	}
	return nil
}

var _ interface {
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.ExecerContext
	driver.QueryerContext
	driver.NamedValueChecker
	driver.SessionResetter
	driver.Validator
	driver.Pinger
} = (*pgConn)(nil)
