package storage

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
)

// freshDB opens a new database file in the test's temporary folder.
func freshDB(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), dbtest.Path(t, "agentd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// testKey is a NewKey whose hash is that of secret.
func testKey(secret string) NewKey {
	h := sha256.Sum256([]byte(secret))
	return NewKey{Name: secret, Prefix: "agd_" + secret, Hash: h[:], RateLimit: 60}
}

// hashOf is the stored hash of secret.
func hashOf(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

func TestOrgNamesAreUniqueAndFoundByIDOrName(t *testing.T) {
	ctx := context.Background()
	db := freshDB(t)
	a, err := db.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateOrg(ctx, "acme"); !errors.Is(err, ErrConflict) {
		t.Fatalf("taken name: %v, want ErrConflict", err)
	}
	// An organization named like another's id: the id wins.
	b, err := db.CreateOrg(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"acme": a.ID, a.ID: a.ID, b.ID: b.ID} {
		o, err := db.FindOrg(ctx, q)
		if err != nil || o.ID != want {
			t.Errorf("FindOrg(%q) = %s, %v; want %s", q, o.ID, err, want)
		}
	}
	if _, err := db.FindOrg(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown org: %v", err)
	}
	orgs, err := db.ListOrgs(ctx)
	if err != nil || len(orgs) != 2 || orgs[0].ID != a.ID || orgs[1].ID != b.ID {
		t.Fatalf("ListOrgs oldest first: %+v %v", orgs, err)
	}
}

// Bootstrap creates the first organization, owner and key once; a second
// process starting on the same file creates nothing.
func TestBootstrapOnlyOnAnEmptyFile(t *testing.T) {
	ctx := context.Background()
	db := freshDB(t)
	if ok, err := db.Bootstrap(ctx, "default", "owner@example.test", testKey("first")); err != nil || !ok {
		t.Fatalf("first bootstrap: %v %v", ok, err)
	}
	other, err := Open(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ok, err := other.Bootstrap(ctx, "default", "owner@example.test", testKey("second")); err != nil || ok {
		t.Fatalf("second bootstrap: %v %v, want nothing created", ok, err)
	}
	k, err := db.LookupKey(ctx, hashOf("first"))
	if err != nil || k.Role != "owner" {
		t.Fatalf("owner key: %+v %v", k, err)
	}
	if _, err := db.LookupKey(ctx, hashOf("second")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second key stored: %v", err)
	}
	if orgs, _ := db.ListOrgs(ctx); len(orgs) != 1 {
		t.Fatalf("%d organizations", len(orgs))
	}
}

// CreateOrgWithOwner is all or nothing: a taken name leaves no user or key.
func TestCreateOrgWithOwnerAllOrNothing(t *testing.T) {
	ctx := context.Background()
	db := freshDB(t)
	o, u, k, err := db.CreateOrgWithOwner(ctx, "acme", "boss@acme.test", testKey("acme"))
	if err != nil || u.Role != "owner" || u.OrgID != o.ID || k.OrgID != o.ID || k.UserID != u.ID || k.UserEmail != "boss@acme.test" {
		t.Fatalf("create: %+v %+v %+v %v", o, u, k, err)
	}
	if _, _, _, err := db.CreateOrgWithOwner(ctx, "acme", "other@acme.test", testKey("dup")); !errors.Is(err, ErrConflict) {
		t.Fatalf("taken name: %v", err)
	}
	if _, err := db.LookupKey(ctx, hashOf("dup")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the failed organization's key was stored: %v", err)
	}
	if us, _ := db.ListUsers(ctx, o.ID); len(us) != 1 {
		t.Fatalf("users of acme: %+v", us)
	}
}

func TestUsersPerOrganization(t *testing.T) {
	ctx := context.Background()
	db := freshDB(t)
	o, owner, _, err := db.CreateOrgWithOwner(ctx, "acme", "boss@acme.test", testKey("acme"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := db.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := db.AddUser(ctx, o.ID, "dev@acme.test", "member")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddUser(ctx, o.ID, "dev@acme.test", "admin"); !errors.Is(err, ErrConflict) {
		t.Fatalf("same email twice: %v", err)
	}
	if _, err := db.AddUser(ctx, other.ID, "dev@acme.test", "admin"); err != nil {
		t.Fatalf("same email in another organization: %v", err)
	}
	if _, err := db.AddUser(ctx, o.ID, "second-owner@acme.test", "owner"); err != nil {
		t.Fatal(err)
	}
	if u, err := db.FirstOwner(ctx, o.ID); err != nil || u.ID != owner.ID {
		t.Fatalf("first owner: %+v %v", u, err)
	}
	if u, err := db.FindUser(ctx, o.ID, "dev@acme.test"); err != nil || u.ID != dev.ID || u.Role != "member" {
		t.Fatalf("find user: %+v %v", u, err)
	}
	if _, err := db.FindUser(ctx, other.ID, "boss@acme.test"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another organization's user: %v", err)
	}
	us, err := db.ListUsers(ctx, o.ID)
	if err != nil || len(us) != 3 || us[0].ID != owner.ID || us[1].ID != dev.ID {
		t.Fatalf("users oldest first: %+v %v", us, err)
	}

	// A removed user's keys stop working at once.
	key := testKey("dev")
	key.OrgID, key.UserID = o.ID, dev.ID
	if _, err := db.CreateKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := db.RemoveUser(ctx, o.ID, "dev@acme.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.LookupKey(ctx, hashOf("dev")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removed user's key: %v", err)
	}
	if err := db.RemoveUser(ctx, o.ID, "dev@acme.test"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove twice: %v", err)
	}
	if _, err := db.FindUser(ctx, other.ID, "dev@acme.test"); err != nil {
		t.Fatalf("the other organization's dev went too: %v", err)
	}
}
