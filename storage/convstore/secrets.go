package convstore

import (
	"context"

	"github.com/agentd/agentd/storage/sqldb"
)

// UseSealer makes the store encrypt the tools secrets it writes and
// decrypt the ones it reads; storage.Open sets it from the secret key.
func (s *Store) UseSealer(b sqldb.Sealer) { s.box = sqldb.OrPlainText(b) }

// ResealSecrets rewrites every tools secret sealed with `to`, opening each
// with `from` (which also takes plain text), in one transaction: the
// secret key's rotation. It returns how many values it rewrote.
func (s *Store) ResealSecrets(ctx context.Context, from, to sqldb.Sealer) (int, error) {
	return s.c.Reseal(ctx, from, to, "tools secret of", "SELECT org_id, secret, coalesce(prev_secret, '') FROM org_tools_secrets",
		"UPDATE org_tools_secrets SET secret = ?, prev_secret = nullif(?, '') WHERE org_id = ?")
}
