package convstore

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/agentd/agentd/storage/sqldb"
)

// UseSealer makes the store encrypt the tools secrets it writes and
// decrypt the ones it reads; storage.Open sets it from the secret key.
func (s *Store) UseSealer(b sqldb.Sealer) {
	if b == nil {
		b = sqldb.PlainText{}
	}
	s.box = b
}

// ResealSecrets rewrites every tools secret sealed with `to`, opening each
// with `from` (which also takes plain text), in one transaction: the
// secret key's rotation. It returns how many values it rewrote.
func (s *Store) ResealSecrets(ctx context.Context, from, to sqldb.Sealer) (int, error) {
	n := 0
	err := s.c.Write(ctx, func(tx *sql.Tx) error {
		n = 0
		rows, err := tx.QueryContext(ctx, "SELECT org_id, secret FROM org_tools_secrets")
		if err != nil {
			return err
		}
		sealed := map[string]string{}
		for rows.Next() {
			var org, v string
			if err := rows.Scan(&org, &v); err != nil {
				rows.Close()
				return err
			}
			plain, err := from.Open(v)
			if err != nil {
				rows.Close()
				return fmt.Errorf("tools secret of %s: %w", org, err)
			}
			if sealed[org], err = to.Seal(plain); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for org, v := range sealed {
			if _, err := tx.ExecContext(ctx, "UPDATE org_tools_secrets SET secret = ? WHERE org_id = ?", v, org); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
