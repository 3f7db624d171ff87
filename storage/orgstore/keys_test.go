package orgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/orgstore"
)

// keyOrg is an organization with its owner and the owner's key "owner".
func keyOrg(t *testing.T, db *storage.Stores, name string) (orgstore.Org, orgstore.User) {
	t.Helper()
	o, u, _, err := db.Orgs.CreateOrgWithOwner(context.Background(), name, "owner@"+name+".test", testKey(name+"-owner"))
	if err != nil {
		t.Fatal(err)
	}
	return o, u
}

func TestKeysBelongToAUserOfTheOrganization(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	acme, boss := keyOrg(t, db, "acme")
	other, _ := keyOrg(t, db, "other")

	k := testKey("wrong-org")
	k.OrgID, k.UserID = other.ID, boss.ID
	if _, err := db.Orgs.CreateKey(ctx, k); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("key for another organization's user: %v", err)
	}
	if _, err := db.Orgs.LookupKey(ctx, hashOf("wrong-org")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("refused key stored: %v", err)
	}

	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	k = testKey("ci")
	k.OrgID, k.UserID, k.ExpiresAt, k.RateLimit = acme.ID, boss.ID, &exp, 7
	created, err := db.Orgs.CreateKey(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Orgs.LookupKey(ctx, hashOf("ci"))
	if err != nil || got.KeyID != created.ID || got.OrgID != acme.ID || got.Role != "owner" || got.RateLimit != 7 ||
		got.Prefix != "agd_ci" || got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) {
		t.Fatalf("lookup: %+v %v", got, err)
	}
	if _, err := db.Orgs.LookupKey(ctx, hashOf("nope")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown hash: %v", err)
	}
}

func TestRevokeKey(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	acme, _ := keyOrg(t, db, "acme")
	other, _ := keyOrg(t, db, "other")
	ks, err := db.Orgs.ListKeys(ctx, acme.ID)
	if err != nil || len(ks) != 1 {
		t.Fatalf("keys: %+v %v", ks, err)
	}
	id := ks[0].ID
	if err := db.Orgs.RevokeKey(ctx, other.ID, id); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("revoked through another organization: %v", err)
	}
	if _, err := db.Orgs.LookupKey(ctx, hashOf("acme-owner")); err != nil {
		t.Fatalf("key gone after a refused revoke: %v", err)
	}
	if err := db.Orgs.RevokeKey(ctx, acme.ID, id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Orgs.LookupKey(ctx, hashOf("acme-owner")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("revoked key still found: %v", err)
	}
	ks, _ = db.Orgs.ListKeys(ctx, acme.ID)
	if len(ks) != 1 || ks[0].RevokedAt == nil {
		t.Fatalf("revoked key listed as %+v", ks)
	}
	first := *ks[0].RevokedAt
	// Twice is fine and keeps the first time; "" is any organization (the CLI).
	if err := db.Orgs.RevokeKey(ctx, "", id); err != nil {
		t.Fatal(err)
	}
	if ks, _ = db.Orgs.ListKeys(ctx, acme.ID); !ks[0].RevokedAt.Equal(first) {
		t.Fatalf("revoked again at %v, first %v", ks[0].RevokedAt, first)
	}
	if err := db.Orgs.RevokeKey(ctx, "", "no-such-key"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
}

// ListKeys is newest first with the creator's email, and its cache follows
// changes made through another handle on the file (another process).
func TestListKeysFollowsOtherProcesses(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	acme, boss := keyOrg(t, db, "acme")
	for _, name := range []string{"a", "b", "c"} {
		k := testKey(name)
		k.OrgID, k.UserID = acme.ID, boss.ID
		if _, err := db.Orgs.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	ks, err := db.Orgs.ListKeys(ctx, acme.ID)
	if err != nil || len(ks) != 4 || ks[0].Name != "c" || ks[1].Name != "b" || ks[3].Name != "acme-owner" || ks[0].UserEmail != "owner@acme.test" {
		t.Fatalf("keys newest first: %+v %v", ks, err)
	}
	ks[0].Name = "changed by the caller"
	if again, _ := db.Orgs.ListKeys(ctx, acme.ID); again[0].Name != "c" {
		t.Fatal("a caller's change reached the cached list")
	}

	other, err := storage.Open(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Orgs.RevokeKey(ctx, "", ks[1].ID); err != nil {
		t.Fatal(err)
	}
	k := testKey("d")
	k.OrgID, k.UserID = acme.ID, boss.ID
	if _, err := other.Orgs.CreateKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	ks, err = db.Orgs.ListKeys(ctx, acme.ID)
	if err != nil || len(ks) != 5 || ks[0].Name != "d" || ks[2].RevokedAt == nil {
		t.Fatalf("after the other process's changes: %+v %v", ks, err)
	}
}

// The auth epoch moves with every change that can invalidate a cached key
// (key created or revoked, user removed), in this process or another, and
// stays put for other writes.
func TestAuthEpoch(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	acme, boss := keyOrg(t, db, "acme")
	other, err := storage.Open(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	epoch := func(d *storage.Stores) int64 {
		t.Helper()
		n, err := d.AuthEpoch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	last := epoch(db)
	if epoch(other) != last {
		t.Fatal("two handles disagree")
	}
	moved := func(what string, want bool) {
		t.Helper()
		for _, d := range []*storage.Stores{db, other} {
			// Twice: the second read may come from the fast path.
			a, b := epoch(d), epoch(d)
			if a != b || (a != last) != want {
				t.Fatalf("%s: epoch %d then %d, was %d; moved should be %v", what, a, b, last, want)
			}
		}
		last = epoch(db)
	}
	if _, err := db.Agents.CreateAgent(ctx, agentstore.Agent{OrgID: acme.ID, Name: "a", Type: "voice", Status: "active"}); err != nil {
		t.Fatal(err)
	}
	moved("an agent created", false)
	k := testKey("ci")
	k.OrgID, k.UserID = acme.ID, boss.ID
	created, err := other.Orgs.CreateKey(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	moved("a key created by the other handle", true)
	if err := db.Orgs.RevokeKey(ctx, acme.ID, created.ID); err != nil {
		t.Fatal(err)
	}
	moved("a key revoked", true)
	if _, err := db.Orgs.AddUser(ctx, acme.ID, "dev@acme.test", "member"); err != nil {
		t.Fatal(err)
	}
	moved("a user added (no key of theirs yet)", false)
	if err := other.Orgs.RemoveUser(ctx, acme.ID, "dev@acme.test"); err != nil {
		t.Fatal(err)
	}
	moved("a user removed by the other handle", true)
}
