package convstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/secretbox"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
)

func rawToolsSecret(t *testing.T, db *storage.Stores, org string) string {
	t.Helper()
	var v string
	if err := db.Conn().Reader().QueryRowContext(context.Background(), "SELECT secret FROM org_tools_secrets WHERE org_id = ?", org).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The url tools' signing secret is encrypted in the database like the
// webhook secrets (issue 27 item 9), read back in clear, and re-encrypted
// by a rotation of the secret key.
func TestToolsSecretEncryptedAtRest(t *testing.T) {
	if dbtest.Postgres() { // on PostgreSQL the key comes only from the environment
		t.Setenv(secretbox.EnvKey, secretbox.FormatKey(secretbox.NewKey()))
	}
	ctx := context.Background()
	db, org, _ := storetest.WithChatAgent(t)
	if _, err := db.Conversations.RotateToolsSecret(ctx, org, "whsec_tools1", time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Conversations.ToolsSecret(ctx, org, time.Now()); err != nil || got.Secret != "whsec_tools1" {
		t.Fatalf("first read: %+v %v", got, err)
	}
	if v := rawToolsSecret(t, db, org); strings.Contains(v, "whsec_") || !secretbox.Sealed(v) {
		t.Fatalf("stored %q", v)
	}
	if _, err := db.Conversations.RotateToolsSecret(ctx, org, "whsec_tools2", time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	before := rawToolsSecret(t, db, org)
	if strings.Contains(before, "whsec_") {
		t.Fatalf("after rotation stored %q", before)
	}
	var newKey []byte
	if dbtest.Postgres() {
		newKey = secretbox.NewKey()
	}
	if n, err := storage.RotateSecretKey(ctx, db, newKey); err != nil || n != 1 {
		t.Fatalf("key rotation: %d %v", n, err)
	}
	after := rawToolsSecret(t, db, org)
	if after == before || !secretbox.Sealed(after) {
		t.Fatalf("key rotation left %q (was %q)", after, before)
	}
	if got, err := db.Conversations.ToolsSecret(ctx, org, time.Now()); err != nil || got.Secret != "whsec_tools2" || got.Previous != "whsec_tools1" {
		t.Fatalf("after key rotation: %+v %v", got, err)
	}
}
