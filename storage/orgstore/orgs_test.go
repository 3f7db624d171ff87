package orgstore_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
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
	other := storetest.Open(t, db.Path())
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

	other := storetest.Open(t, db.Path())
	if err := other.Orgs.RevokeKey(ctx, "", ks[1].ID); err != nil {
		t.Fatal(err)
	}
	k := testKey("d")
	k.OrgID, k.UserID = acme.ID, boss.ID
	if _, err := other.Orgs.CreateKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	// On PostgreSQL this handle hears of them by NOTIFY, a moment after the
	// commit (as TestAuthEpoch allows): under load, more than at once.
	within := time.Duration(0)
	if dbtest.Postgres() {
		within = time.Second
	}
	if !testkit.Within(within, func() bool {
		ks, err = db.Orgs.ListKeys(ctx, acme.ID)
		return err == nil && len(ks) == 5 && ks[0].Name == "d" && ks[2].RevokedAt != nil
	}) {
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
	other := storetest.Open(t, db.Path())
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
			// On PostgreSQL the other handle hears of it by NOTIFY, a
			// moment after the commit: it may take that long.
			within := time.Duration(0)
			if want && dbtest.Postgres() {
				within = time.Second
			}
			var a, b int64
			if !testkit.Within(within, func() bool {
				// Twice: the second read may come from the fast path.
				a, b = epoch(d), epoch(d)
				return a == b && (a != last) == want
			}) {
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
