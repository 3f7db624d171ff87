package orgstore_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/orgstore"
)

// testKey is a orgstore.NewKey whose hash is that of secret.
func testKey(secret string) orgstore.NewKey {
	h := sha256.Sum256([]byte(secret))
	return orgstore.NewKey{Name: secret, Prefix: "agd_" + secret, Hash: h[:], RateLimit: 60}
}

// hashOf is the stored hash of secret.
func hashOf(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

func TestOrgNamesAreUniqueAndFoundByIDOrName(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	a, err := db.Orgs.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Orgs.CreateOrg(ctx, "acme"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("taken name: %v, want storage.ErrConflict", err)
	}
	// An organization named like another's id: the id wins.
	b, err := db.Orgs.CreateOrg(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"acme": a.ID, a.ID: a.ID, b.ID: b.ID} {
		o, err := db.Orgs.FindOrg(ctx, q)
		if err != nil || o.ID != want {
			t.Errorf("FindOrg(%q) = %s, %v; want %s", q, o.ID, err, want)
		}
	}
	if _, err := db.Orgs.FindOrg(ctx, "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown org: %v", err)
	}
	orgs, err := db.Orgs.ListOrgs(ctx)
	if err != nil || len(orgs) != 2 || orgs[0].ID != a.ID || orgs[1].ID != b.ID {
		t.Fatalf("ListOrgs oldest first: %+v %v", orgs, err)
	}
}

// Bootstrap creates the first organization, owner and key once; a second
// process starting on the same file creates nothing.
func TestBootstrapOnlyOnAnEmptyFile(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	if ok, err := db.Orgs.Bootstrap(ctx, "default", "owner@example.test", testKey("first")); err != nil || !ok {
		t.Fatalf("first bootstrap: %v %v", ok, err)
	}
	other, err := storage.Open(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ok, err := other.Orgs.Bootstrap(ctx, "default", "owner@example.test", testKey("second")); err != nil || ok {
		t.Fatalf("second bootstrap: %v %v, want nothing created", ok, err)
	}
	k, err := db.Orgs.LookupKey(ctx, hashOf("first"))
	if err != nil || k.Role != "owner" {
		t.Fatalf("owner key: %+v %v", k, err)
	}
	if _, err := db.Orgs.LookupKey(ctx, hashOf("second")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second key stored: %v", err)
	}
	if orgs, _ := db.Orgs.ListOrgs(ctx); len(orgs) != 1 {
		t.Fatalf("%d organizations", len(orgs))
	}
}

// CreateOrgWithOwner is all or nothing: a taken name leaves no user or key.
func TestCreateOrgWithOwnerAllOrNothing(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	o, u, k, err := db.Orgs.CreateOrgWithOwner(ctx, "acme", "boss@acme.test", testKey("acme"))
	if err != nil || u.Role != "owner" || u.OrgID != o.ID || k.OrgID != o.ID || k.UserID != u.ID || k.UserEmail != "boss@acme.test" {
		t.Fatalf("create: %+v %+v %+v %v", o, u, k, err)
	}
	if _, _, _, err := db.Orgs.CreateOrgWithOwner(ctx, "acme", "other@acme.test", testKey("dup")); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("taken name: %v", err)
	}
	if _, err := db.Orgs.LookupKey(ctx, hashOf("dup")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the failed organization's key was stored: %v", err)
	}
	if us, _ := db.Orgs.ListUsers(ctx, o.ID); len(us) != 1 {
		t.Fatalf("users of acme: %+v", us)
	}
}

func TestUsersPerOrganization(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	o, owner, _, err := db.Orgs.CreateOrgWithOwner(ctx, "acme", "boss@acme.test", testKey("acme"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := db.Orgs.CreateOrg(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := db.Orgs.AddUser(ctx, o.ID, "dev@acme.test", "member")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Orgs.AddUser(ctx, o.ID, "dev@acme.test", "admin"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("same email twice: %v", err)
	}
	if _, err := db.Orgs.AddUser(ctx, other.ID, "dev@acme.test", "admin"); err != nil {
		t.Fatalf("same email in another organization: %v", err)
	}
	if _, err := db.Orgs.AddUser(ctx, o.ID, "second-owner@acme.test", "owner"); err != nil {
		t.Fatal(err)
	}
	if u, err := db.Orgs.FirstOwner(ctx, o.ID); err != nil || u.ID != owner.ID {
		t.Fatalf("first owner: %+v %v", u, err)
	}
	if u, err := db.Orgs.FindUser(ctx, o.ID, "dev@acme.test"); err != nil || u.ID != dev.ID || u.Role != "member" {
		t.Fatalf("find user: %+v %v", u, err)
	}
	if _, err := db.Orgs.FindUser(ctx, other.ID, "boss@acme.test"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another organization's user: %v", err)
	}
	us, err := db.Orgs.ListUsers(ctx, o.ID)
	if err != nil || len(us) != 3 || us[0].ID != owner.ID || us[1].ID != dev.ID {
		t.Fatalf("users oldest first: %+v %v", us, err)
	}

	// A removed user's keys stop working at once.
	key := testKey("dev")
	key.OrgID, key.UserID = o.ID, dev.ID
	if _, err := db.Orgs.CreateKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := db.Orgs.RemoveUser(ctx, o.ID, "dev@acme.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Orgs.LookupKey(ctx, hashOf("dev")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("removed user's key: %v", err)
	}
	if err := db.Orgs.RemoveUser(ctx, o.ID, "dev@acme.test"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("remove twice: %v", err)
	}
	if _, err := db.Orgs.FindUser(ctx, other.ID, "dev@acme.test"); err != nil {
		t.Fatalf("the other organization's dev went too: %v", err)
	}
}
