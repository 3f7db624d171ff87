package access

import (
	"context"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/orgstore"
)

func openDB(t *testing.T) (*Service, orgstore.User) {
	t.Helper()
	st := storetest.Open(t, dbtest.Path(t, "a.db"))
	db := New(Deps{Orgs: st.Orgs, Calls: st.Calls})
	o, _, _, err := db.CreateOrg(context.Background(), "acme", "o@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := db.orgs.FirstOwner(context.Background(), o.ID)
	if err := db.SetPassword(context.Background(), u.ID, "a long password"); err != nil {
		t.Fatal(err)
	}
	return db, u
}

// Sessions end 12 hours after the last request or 7 days after sign-in.
func TestSessionIdleAndAbsoluteExpiry(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	t0 := time.Now().UTC()
	st, err := db.Login(ctx, "o@acme.test", "a long password", "", "127.0.0.1", t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, st.Token, t0.Add(IdleTimeout-time.Minute)); err != nil {
		t.Fatalf("active within the idle timeout: %v", err)
	}
	// Activity keeps it alive past 12 h after sign-in...
	at := t0.Add(IdleTimeout - time.Minute)
	for at.Add(IdleTimeout - time.Hour).Before(t0.Add(AbsoluteTimeout)) {
		at = at.Add(IdleTimeout - time.Hour)
		if _, err := db.Authenticate(ctx, st.Token, at); err != nil {
			t.Fatalf("active session ended at +%v: %v", at.Sub(t0), err)
		}
	}
	// ...but never past 7 days.
	if _, err := db.Authenticate(ctx, st.Token, t0.Add(AbsoluteTimeout)); !errs.Is(err, errs.Unauthenticated) {
		t.Fatalf("after 7 days: %v", err)
	}
	idle, _ := db.Login(ctx, "o@acme.test", "a long password", "", "127.0.0.1", t0)
	if _, err := db.Authenticate(ctx, idle.Token, t0.Add(IdleTimeout)); !errs.Is(err, errs.Unauthenticated) {
		t.Fatalf("idle 12 h: %v", err)
	}
}

func TestPasswordHashing(t *testing.T) {
	h := HashPassword("a long password")
	if !VerifyPassword(h, "a long password") || VerifyPassword(h, "a long passworD") || VerifyPassword("garbage", "x") {
		t.Fatal("verify")
	}
	if HashPassword("a long password") == h {
		t.Fatal("no salt")
	}
	if ValidPassword("short") == nil || ValidPassword(string(make([]byte, MaxPasswordLen+1))) == nil {
		t.Fatal("length limits")
	}
}

// Members: nobody removes themself, an admin cannot touch owners, and the
// last owner stays.
func TestMemberRules(t *testing.T) {
	ctx := context.Background()
	db, owner := openDB(t)
	own := Actor{UserID: owner.ID, Role: "owner"}
	adm, err := db.AddMember(ctx, own, owner.OrgID, "adm@acme.test", "admin")
	if err != nil {
		t.Fatal(err)
	}
	admin := Actor{UserID: adm.ID, Role: "admin"}
	if _, err := db.AddMember(ctx, admin, owner.OrgID, "x@acme.test", "owner"); !errs.Is(err, errs.Forbidden) {
		t.Fatalf("admin adds owner: %v", err)
	}
	if _, err := db.AddMember(ctx, admin, owner.OrgID, "adm@acme.test", "member"); !errs.Is(err, errs.Conflict) {
		t.Fatalf("duplicate: %v", err)
	}
	if err := db.RemoveMember(ctx, admin, owner.OrgID, owner.ID); !errs.Is(err, errs.Forbidden) {
		t.Fatalf("admin removes owner: %v", err)
	}
	if err := db.RemoveMember(ctx, own, owner.OrgID, owner.ID); !errs.Is(err, errs.Conflict) {
		t.Fatalf("owner removes self: %v", err)
	}
	if _, err := db.ChangeRole(ctx, own, owner.OrgID, owner.ID, "admin"); !errs.Is(err, errs.Conflict) {
		t.Fatalf("last owner demoted: %v", err)
	}
	if _, err := db.ChangeRole(ctx, own, owner.OrgID, adm.ID, "nope"); !errs.Is(err, errs.Invalid) {
		t.Fatalf("bad role: %v", err)
	}
	if err := db.RemoveMember(ctx, own, owner.OrgID, "missing"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("missing member: %v", err)
	}
}
