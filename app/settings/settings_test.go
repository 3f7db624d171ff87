package settings

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
)

func sp(s string) *string { return &s }
func bp(b bool) *bool     { return &b }

func TestUpdate(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t, dbtest.Path(t, "s.db"))
	org, _ := db.Orgs.CreateOrg(ctx, "o")
	s, err := svc(db).Get(ctx, org.ID)
	if err != nil || s.CallingHours.Enabled || s.CallingHours.Start != "08:00" || s.CallingHours.End != "21:00" ||
		len(s.CallingHours.Days) != 7 || s.CallingHours.DefaultTimezone != "UTC" || s.UpdatedAt != nil {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	for _, c := range []struct {
		p     HoursPatch
		field string
	}{
		{HoursPatch{Start: sp("8am")}, "callingHours.start"},
		{HoursPatch{End: sp("07:00")}, "callingHours.end"},
		{HoursPatch{Days: &[]int{}}, "callingHours.days"},
		{HoursPatch{Days: &[]int{1, 7}}, "callingHours.days"},
		{HoursPatch{DefaultTimezone: sp("Mars/Olympus")}, "callingHours.defaultTimezone"},
	} {
		_, err := svc(db).Update(ctx, org.ID, Patch{CallingHours: &c.p}, time.Now())
		var e *errs.Error
		if !errors.As(err, &e) || e.Field != c.field || e.Kind != errs.Invalid {
			t.Errorf("%+v: %v, want invalid %s", c.p, err, c.field)
		}
	}
	got, err := svc(db).Update(ctx, org.ID, Patch{CallingHours: &HoursPatch{Enabled: bp(true), Days: &[]int{5, 1, 1, 2},
		DefaultTimezone: sp("America/Chicago")}}, time.Now())
	if err != nil || !got.CallingHours.Enabled || len(got.CallingHours.Days) != 3 || got.CallingHours.Days[0] != 1 || got.UpdatedAt == nil {
		t.Fatalf("update: %+v %v", got, err)
	}
	again, _ := svc(db).Get(ctx, org.ID)
	if !again.CallingHours.Enabled || again.CallingHours.DefaultTimezone != "America/Chicago" || again.CallingHours.Start != "08:00" {
		t.Fatalf("read back: %+v", again)
	}
}

// svc is the feature over db's stores, as app/features builds it.
func svc(db *storage.Stores) *Service { return New(Deps{Calls: db.Calls}) }
