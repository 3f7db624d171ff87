package hookstore

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/agentd/agentd/storage/sqldb"
)

// UseSealer makes the store encrypt the signing secrets it writes and
// decrypt the ones it reads; storage.Open sets it from the secret key.
func (db *Webhooks) UseSealer(s sqldb.Sealer) {
	if s == nil {
		s = sqldb.PlainText{}
	}
	db.box = s
}

// Sealing reports whether secrets are encrypted at rest.
func (db *Webhooks) Sealing() bool {
	_, plain := db.box.(sqldb.PlainText)
	return !plain
}

// openSecrets decrypts an endpoint's two secrets in place.
func (db *Webhooks) openSecrets(secret, prev *string) error {
	var err error
	if *secret, err = db.box.Open(*secret); err != nil {
		return fmt.Errorf("storage: webhook secret: %w", err)
	}
	if *prev, err = db.box.Open(*prev); err != nil {
		return fmt.Errorf("storage: webhook secret: %w", err)
	}
	return nil
}

// ResealSecrets rewrites every webhook secret sealed with `to`, opening
// each with `from` (which also takes plain text), in one transaction: the
// rotation of the secret key, and the encryption of rows written before
// there was one. It returns how many values it rewrote.
func (db *Webhooks) ResealSecrets(ctx context.Context, from, to sqldb.Sealer) (int, error) {
	n := 0
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		n = 0
		rows, err := tx.QueryContext(ctx, "SELECT id, secret, coalesce(prev_secret, '') FROM webhook_endpoints")
		if err != nil {
			return err
		}
		type row struct{ id, secret, prev string }
		var all []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.secret, &r.prev); err != nil {
				rows.Close()
				return err
			}
			all = append(all, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range all {
			var vals [2]string
			for i, v := range []string{r.secret, r.prev} {
				plain, err := from.Open(v)
				if err != nil {
					return fmt.Errorf("webhook %s: %w", r.id, err)
				}
				if vals[i], err = to.Seal(plain); err != nil {
					return err
				}
			}
			var prev any
			if vals[1] != "" {
				prev = vals[1]
			}
			if _, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET secret = ?, prev_secret = ? WHERE id = ?", vals[0], prev, r.id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
