package storage

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agentd/agentd/internal/secretbox"
	"github.com/agentd/agentd/storage/sqldb"
)

// RotateSecretKey re-encrypts every secret the database keeps (webhook
// and url-tool signing secrets, plain-text ones from before encryption
// included) under
// a new key, in one transaction, and returns how many values it rewrote.
//
// With the key file of a SQLite database (no AGENTD_SECRET_KEY), newKey
// may be nil: a key is made, written to the key file's ".new" sibling
// first (Load opens with both while it exists, so a crash at any point
// loses nothing), the rows are rewritten, and the new file replaces the
// old. With AGENTD_SECRET_KEY (and always on PostgreSQL) newKey is given
// and the operator sets AGENTD_SECRET_KEY to it before the next start.
// Processes that hold the old key must restart.
func RotateSecretKey(ctx context.Context, db *Stores, newKey []byte) (int, error) {
	pg := db.Postgres()
	envKey := os.Getenv(secretbox.EnvKey) != ""
	current, err := secretbox.Load(db.Path(), pg)
	if err != nil {
		return 0, err
	}
	var from sqldb.Sealer = sqldb.PlainText{}
	if current != nil {
		from = current
	}
	if envKey || pg {
		if newKey == nil {
			return 0, fmt.Errorf("the key comes from %s: give the new key (base64 of 32 bytes) and set %s to it after the rotation", secretbox.EnvKey, secretbox.EnvKey)
		}
		to, err := secretbox.New(newKey)
		if err != nil {
			return 0, err
		}
		if envKey { // open with the new key too, so a rotation cut short can run again
			old, err := secretbox.ParseKey(os.Getenv(secretbox.EnvKey))
			if err != nil {
				return 0, err
			}
			if from, err = secretbox.New(old, newKey); err != nil {
				return 0, err
			}
		}
		n, err := resealAll(ctx, db, from, to)
		if err == nil {
			useSealer(db, to)
		}
		return n, err
	}
	file := secretbox.KeyFile(db.Path())
	pending := file + ".new"
	if k, err := secretbox.ReadKeyFile(pending); err == nil {
		newKey = k // an interrupted rotation: finish it with its key
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, err
	} else {
		if newKey == nil {
			newKey = secretbox.NewKey()
		}
		if err := secretbox.WriteKeyFile(pending, newKey); err != nil {
			return 0, err
		}
	}
	to, err := secretbox.New(newKey)
	if err != nil {
		return 0, err
	}
	n, err := resealAll(ctx, db, from, to)
	if err != nil {
		return 0, err // nothing was rewritten; the next rotation finishes with the same key
	}
	if err := os.Rename(pending, file); err != nil {
		return n, fmt.Errorf("the secrets now use the key in %s; move it to %s: %w", pending, file, err)
	}
	useSealer(db, to)
	return n, nil
}

// useSealer makes this process's stores seal with the new key.
func useSealer(db *Stores, to *secretbox.Box) {
	db.Webhooks.UseSealer(to)
	db.Conversations.UseSealer(to)
	db.Secrets = to
}

// resealAll rewrites the webhook and the tools secrets. Each store's is one
// transaction: if the second fails, the rotation's key file is still
// pending and Load opens with both keys, so running it again finishes it.
func resealAll(ctx context.Context, db *Stores, from, to sqldb.Sealer) (int, error) {
	n, err := db.Webhooks.ResealSecrets(ctx, from, to)
	if err != nil {
		return 0, err
	}
	m, err := db.Conversations.ResealSecrets(ctx, from, to)
	if err != nil {
		return 0, err
	}
	a, err := db.Agents.ResealToolHeaders(ctx, from, to)
	return n + m + a, err
}
