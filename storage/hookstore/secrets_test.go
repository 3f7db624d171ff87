package hookstore_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/secretbox"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/hookstore"
)

// rawSecrets reads the secret columns as stored.
func rawSecrets(t *testing.T, db *storage.Stores, id string) (string, string) {
	t.Helper()
	var s, p string
	if err := db.Conn().Reader().QueryRowContext(context.Background(), "SELECT secret, coalesce(prev_secret, '') FROM webhook_endpoints WHERE id = ?", id).Scan(&s, &p); err != nil {
		t.Fatal(err)
	}
	return s, p
}

// Webhook signing secrets are encrypted in the database (issue 27 item 9:
// they sat in plain text, so any copy of the file or a backup gave them
// away), and read back in clear by the store: endpoints, rotation, the
// delivery worker's claims.
func TestWebhookSecretsEncryptedAtRest(t *testing.T) {
	if dbtest.Postgres() { // on PostgreSQL the key comes only from the environment
		t.Setenv(secretbox.EnvKey, secretbox.FormatKey(secretbox.NewKey()))
	}
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	ep, err := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://example.com", Events: []string{"*"}, Secret: "whsec_first"})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := rawSecrets(t, db, ep.ID); strings.Contains(s, "whsec_first") || !secretbox.Sealed(s) {
		t.Fatalf("stored secret %q", s)
	}
	got, err := db.Webhooks.GetWebhook(ctx, org, ep.ID)
	if err != nil || got.Secret != "whsec_first" {
		t.Fatalf("read back: %q %v", got.Secret, err)
	}
	if _, err := db.Webhooks.RotateWebhookSecret(ctx, org, ep.ID, "whsec_second", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	s, p := rawSecrets(t, db, ep.ID)
	if strings.Contains(s+p, "whsec_") {
		t.Fatalf("after rotation stored %q / %q", s, p)
	}
	list, err := db.Webhooks.ListWebhooks(ctx, org)
	if err != nil || len(list) != 1 || list[0].Secret != "whsec_second" || list[0].PrevSecret != "whsec_first" {
		t.Fatalf("list: %+v %v", list, err)
	}
	db.Webhooks.PingWebhook(ctx, org, ep.ID, map[string]string{})
	db.Webhooks.FanOutEvents(ctx)
	now := time.Now()
	jobs, err := db.Webhooks.ClaimDeliveries(ctx, hookstore.DeliveryClaim{Token: "t", WorkerID: "w", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, PerEndpoint: 10})
	if err != nil || len(jobs) != 1 || jobs[0].Secret != "whsec_second" || jobs[0].PrevSecret != "whsec_first" {
		t.Fatalf("claim: %+v %v", jobs, err)
	}
}

// A secret written in plain text by an older version still works, and a
// rotation of the key seals it; the old key no longer opens anything.
func TestPlainSecretsStillWorkAndReseal(t *testing.T) {
	dbtest.SkipOnPostgres(t, "the key file is sqldb.SQLite's")
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	ep, _ := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://example.com", Events: []string{"*"}, Secret: "whsec_new"})
	old, _ := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://example.org", Events: []string{"*"}, Secret: "x"})
	if err := db.Conn().Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET secret = 'whsec_plain' WHERE id = ?", old.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Webhooks.GetWebhook(ctx, org, old.ID); got.Secret != "whsec_plain" {
		t.Fatalf("plain row: %q", got.Secret)
	}
	n, err := storage.RotateSecretKey(ctx, db, nil)
	if err != nil || n != 2 {
		t.Fatalf("rotate: %d %v", n, err)
	}
	for id, want := range map[string]string{ep.ID: "whsec_new", old.ID: "whsec_plain"} {
		if s, _ := rawSecrets(t, db, id); !secretbox.Sealed(s) {
			t.Errorf("after rotation %s is stored %q", id, s)
		}
		if got, err := db.Webhooks.GetWebhook(ctx, org, id); err != nil || got.Secret != want {
			t.Errorf("after rotation %s reads %q %v", id, got.Secret, err)
		}
	}
	// A fresh open (the key file now holds the new key) reads them too.
	path := db.Path()
	db.Close()
	db2 := storetest.Open(t, path)
	if got, err := db2.Webhooks.GetWebhook(ctx, org, old.ID); err != nil || got.Secret != "whsec_plain" {
		t.Fatalf("reopened: %q %v", got.Secret, err)
	}
}

// A rotation of the key reseals both secrets of every endpoint, on both
// dialects, and leaves an endpoint without a previous secret with none
// (NULL, not a sealed empty string).
func TestResealKeepsMissingPrevSecret(t *testing.T) {
	t.Setenv(secretbox.EnvKey, secretbox.FormatKey(secretbox.NewKey()))
	db, org := storetest.WithOrg(t)
	ctx := context.Background()
	plain, _ := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://example.com", Events: []string{"*"}, Secret: "whsec_one"})
	rotated, _ := db.Webhooks.CreateWebhook(ctx, hookstore.WebhookEndpoint{OrgID: org, URL: "https://example.org", Events: []string{"*"}, Secret: "whsec_old"})
	if _, err := db.Webhooks.RotateWebhookSecret(ctx, org, rotated.ID, "whsec_new", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	s0, p0 := rawSecrets(t, db, rotated.ID)
	n, err := storage.RotateSecretKey(ctx, db, secretbox.NewKey())
	if err != nil || n != 2 {
		t.Fatalf("rotate: %d %v", n, err)
	}
	if s, p := rawSecrets(t, db, rotated.ID); s == s0 || p == p0 || !secretbox.Sealed(s) || !secretbox.Sealed(p) {
		t.Fatalf("rotated endpoint stored %q / %q, was %q / %q", s, p, s0, p0)
	}
	var nulls int
	if err := db.Conn().Reader().QueryRowContext(ctx, "SELECT count(*) FROM webhook_endpoints WHERE id = ? AND prev_secret IS NULL", plain.ID).Scan(&nulls); err != nil || nulls != 1 {
		t.Fatalf("endpoint without a previous secret: prev_secret NULL %d %v", nulls, err)
	}
	for id, want := range map[string][2]string{plain.ID: {"whsec_one", ""}, rotated.ID: {"whsec_new", "whsec_old"}} {
		got, err := db.Webhooks.GetWebhook(ctx, org, id)
		if err != nil || got.Secret != want[0] || got.PrevSecret != want[1] {
			t.Errorf("after the key rotation %s reads %q / %q %v, want %q", id, got.Secret, got.PrevSecret, err, want)
		}
	}
}
