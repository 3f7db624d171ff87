package sqldb

import (
	"context"
	"database/sql"
	"fmt"
)

// Sealer encrypts secrets at rest (internal/secretbox.Box is one): Open
// also takes a value written before encryption and returns it unchanged.
// The stores that keep secrets (hookstore, convstore) take one.
type Sealer interface {
	Seal(plain string) (string, error)
	Open(sealed string) (string, error)
}

// PlainText keeps secrets as they are (no key configured).
type PlainText struct{}

func (PlainText) Seal(v string) (string, error) { return v, nil }
func (PlainText) Open(v string) (string, error) { return v, nil }

// OrPlainText is s, or PlainText for nil: what a store's UseSealer keeps.
func OrPlainText(s Sealer) Sealer {
	if s == nil {
		return PlainText{}
	}
	return s
}

// Reseal rewrites sealed values in one transaction, opening each with from
// (which also takes plain text) and sealing it with to: the secret key's
// rotation, and the encryption of rows written before there was a key.
// sel selects each row's key and then its sealed values, all as text; upd
// sets the new values, in the same order, and takes the key last. what
// names a row in errors ("webhook"). It returns how many rows it rewrote.
func (db *DB) Reseal(ctx context.Context, from, to Sealer, what, sel, upd string) (int, error) {
	n := 0
	err := db.Write(ctx, func(tx *sql.Tx) error {
		all, err := resealRows(ctx, tx, from, to, what, sel)
		if err != nil {
			return err
		}
		for _, r := range all {
			args := make([]any, 0, len(r))
			for _, v := range r[1:] {
				args = append(args, v)
			}
			if _, err := tx.ExecContext(ctx, upd, append(args, r[0])...); err != nil {
				return err
			}
		}
		n = len(all)
		return nil
	})
	return n, err
}

// resealRows reads the rows sel selects, each as its key and then its
// values sealed with to; all are read before Reseal writes.
func resealRows(ctx context.Context, tx *sql.Tx, from, to Sealer, what, sel string) ([][]string, error) {
	rows, err := tx.QueryContext(ctx, sel)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var all [][]string
	for rows.Next() {
		r := make([]string, len(cols))
		dest := make([]any, len(r))
		for i := range r {
			dest[i] = &r[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		for i := 1; i < len(r); i++ {
			plain, err := from.Open(r[i])
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", what, r[0], err)
			}
			if r[i], err = to.Seal(plain); err != nil {
				return nil, err
			}
		}
		all = append(all, r)
	}
	return all, rows.Err()
}
