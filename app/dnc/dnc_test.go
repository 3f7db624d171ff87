package dnc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
)

func TestRead(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
		reasons  []string
		problems []int // lines
	}{
		{"one per line", "+14155550100\n\n# comment\n+1 (415) 555-0101\r\n+14155550100\n", []string{"+14155550100", "+14155550101"}, nil, nil},
		{"header of a one-column file", "phone\n+14155550100\n", []string{"+14155550100"}, nil, nil},
		{"CSV by column name", "name,phone,reason\nAda,+14155550100,asked\nBob,+14155550101,\n", []string{"+14155550100", "+14155550101"}, []string{"asked", ""}, nil},
		{"CSV without header", "+14155550100,Ada\n+14155550101,Bob\n", []string{"+14155550100", "+14155550101"}, nil, nil},
		{"semicolons", "number;reason\n+14155550100;lawyer\n", []string{"+14155550100"}, []string{"lawyer"}, nil},
		{"bad lines", "\ufeff+14155550100\nnot a number\n0044\n", []string{"+14155550100"}, nil, []int{2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines, problems, err := Read(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if c.want != nil {
				if len(lines) != len(c.want) {
					t.Fatalf("lines %+v", lines)
				}
				for i, w := range c.want {
					if lines[i].Number != w {
						t.Errorf("line %d: %q, want %q", i, lines[i].Number, w)
					}
					if c.reasons != nil && lines[i].Reason != c.reasons[i] {
						t.Errorf("reason %d: %q, want %q", i, lines[i].Reason, c.reasons[i])
					}
				}
			}
			if len(problems) != len(c.problems) {
				t.Fatalf("problems %+v, want lines %v", problems, c.problems)
			}
			for i, l := range c.problems {
				if problems[i].Line != l {
					t.Errorf("problem %d on line %d, want %d", i, problems[i].Line, l)
				}
			}
		})
	}
	// A column named "Phone Number" is no phone header: the first column
	// (names) is read and refused, quoted commas and all.
	_, problems, _ := Read(strings.NewReader("name,Phone Number\nAda,+14155550100\n\"Lovelace, A\",\"+1 415 555 0101\"\n"))
	if len(problems) != 3 || problems[2].Value != "Lovelace, A" {
		t.Errorf("unknown header: %+v", problems)
	}
}

func TestAddRemoveValidation(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t, dbtest.Path(t, "d.db"))
	org, _ := db.Orgs.CreateOrg(ctx, "o")
	for _, c := range []struct {
		req   AddRequest
		field string
	}{
		{AddRequest{}, "numbers"},
		{AddRequest{Numbers: []string{}}, "numbers"},
		{AddRequest{Numbers: make([]string, MaxPerRequest+1)}, "numbers"},
		{AddRequest{Numbers: []string{"+14155550100", "nope"}}, "numbers[1]"},
		{AddRequest{Numbers: []string{"+14155550100"}, Reason: ptr(strings.Repeat("x", 501))}, "reason"},
	} {
		_, err := svc(db).Add(ctx, org.ID, c.req, time.Now())
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != c.field {
			t.Errorf("%+v: %v, want invalid %s", c.req.Numbers, err, c.field)
		}
	}
	got, err := svc(db).Add(ctx, org.ID, AddRequest{Numbers: []string{"+1 415 555 0100", "+14155550100", "+14155550101"}}, time.Now())
	if err != nil || got != (Added{Added: 2}) {
		t.Fatalf("add: %+v %v", got, err)
	}
	again, _ := svc(db).Add(ctx, org.ID, AddRequest{Numbers: []string{"+14155550100"}}, time.Now())
	if again != (Added{AlreadyListed: 1}) {
		t.Fatalf("again: %+v", again)
	}
	page, err := svc(db).List(ctx, org.ID, ListOptions{PhoneNumber: "+1-415-555-0101"})
	if err != nil || page.Pagination.Total != 1 || page.Numbers[0].PhoneNumber != "+14155550101" || page.Numbers[0].Reason != nil {
		t.Fatalf("list one: %+v %v", page, err)
	}
	rm, err := svc(db).Remove(ctx, org.ID, RemoveRequest{Numbers: []string{"+14155550100", "+14155550199"}})
	if err != nil || rm != (Removed{Removed: 1, NotListed: 1}) {
		t.Fatalf("remove: %+v %v", rm, err)
	}
}

func TestImport(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t, dbtest.Path(t, "d.db"))
	org, _ := db.Orgs.CreateOrg(ctx, "o")
	var b strings.Builder
	b.WriteString("phone,reason\n")
	for i := range 12000 {
		fmt.Fprintf(&b, "+1415%07d,\n", i)
	}
	lines, problems, err := Read(strings.NewReader(b.String()))
	if err != nil || len(problems) != 0 || len(lines) != 12000 {
		t.Fatalf("read %d lines, %d problems, %v", len(lines), len(problems), err)
	}
	var ticks []int
	got, err := svc(db).Import(ctx, org.ID, lines, "imported", func(n int) { ticks = append(ticks, n) })
	if err != nil || got.Added != 12000 || len(ticks) != (12000+ImportChunk-1)/ImportChunk || ticks[len(ticks)-1] != 12000 {
		t.Fatalf("import: %+v %v %v", got, err, ticks)
	}
	page, _ := svc(db).List(ctx, org.ID, ListOptions{Limit: 1})
	if page.Pagination.Total != 12000 || *page.Numbers[0].Reason != "imported" {
		t.Fatalf("page %+v", page)
	}
}

func ptr(s string) *string { return &s }

// svc is the feature over db's stores, as app/features builds it.
func svc(db *storage.Stores) *Service { return New(Deps{Calls: db.Calls}) }
