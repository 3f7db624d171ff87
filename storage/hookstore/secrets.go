package hookstore

import (
	"context"
	"fmt"

	"github.com/agentd/agentd/storage/sqldb"
)

// UseSealer makes the store encrypt the signing secrets it writes and
// decrypt the ones it reads; storage.Open sets it from the secret key.
func (db *Webhooks) UseSealer(s sqldb.Sealer) { db.box = sqldb.OrPlainText(s) }

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
// there was one. It returns how many endpoints it rewrote. An endpoint
// without a previous secret keeps prev_secret NULL.
func (db *Webhooks) ResealSecrets(ctx context.Context, from, to sqldb.Sealer) (int, error) {
	return db.c.Reseal(ctx, from, to, "webhook", "SELECT id, secret, coalesce(prev_secret, '') FROM webhook_endpoints",
		"UPDATE webhook_endpoints SET secret = ?, prev_secret = nullif(?, '') WHERE id = ?")
}
