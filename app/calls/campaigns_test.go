package calls

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
)

// Caller ID rotation: local numbers first (same country and area code),
// then the same country, then any; round robin among them; an explicit
// callerId wins; without callerIdRotation the first number.
func TestCallerPool(t *testing.T) {
	var p callerPool
	a := agentstore.Agent{ID: "a", Config: json.RawMessage(`{"callerIdRotation":true}`),
		PhoneNumbers: []string{"+14155550001", "+12125550001", "+12125550002", "+442071838750"}}
	seen := map[string]int{}
	for range 4 {
		seen[p.pick(a, "+12125559999", "")]++
	}
	if seen["+12125550001"] != 2 || seen["+12125550002"] != 2 {
		t.Errorf("New York callee: %v", seen)
	}
	if got := p.pick(a, "+13125559999", ""); got != "+14155550001" && got != "+12125550001" && got != "+12125550002" {
		t.Errorf("Chicago callee got %s, want a US number", got)
	}
	if got := p.pick(a, "+442079460958", ""); got != "+442071838750" {
		t.Errorf("London callee got %s", got)
	}
	if got := p.pick(a, "+4930123456", "+19995550000"); got != "+19995550000" {
		t.Errorf("explicit callerId lost: %s", got)
	}
	a.Config = json.RawMessage(`{}`)
	if got := p.pick(a, "+12125559999", ""); got != "+14155550001" {
		t.Errorf("without rotation: %s", got)
	}
}

func TestBatchQueryAndName(t *testing.T) {
	for _, c := range []struct {
		q     string
		field string
	}{{"status=done", "status"}, {"limit=0", "limit"}, {"limit=101", "limit"}, {"offset=-1", "offset"}, {"limit=x", "limit"}} {
		q, _ := url.ParseQuery(c.q)
		o, err := ParseBatchQuery(q)
		if err == nil {
			err = o.Validate()
		}
		var e *errs.Error
		if !errors.As(err, &e) || e.Field != c.field {
			t.Errorf("%s: %v, want invalid %s", c.q, err, c.field)
		}
	}
	long := strings.Repeat("n", maxBatchName+1)
	agent := "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	_, err := validateBatch(BatchRequest{AgentID: &agent, Calls: []json.RawMessage{[]byte(`{}`)}, Name: &long})
	var e *errs.Error
	if !errors.As(err, &e) || e.Field != "name" {
		t.Errorf("long name: %v", err)
	}
}

// An immediate call outside calling hours is refused with the recipient's
// local time, the hours and when they open.
func TestOutsideHoursMessage(t *testing.T) {
	h := dial.DefaultCallingHours()
	h.Enabled = true
	hw := hoursWindow(h, "", nil, "+12125550100")      // New York by area code
	now := time.Date(2026, 3, 9, 3, 0, 0, 0, time.UTC) // Sunday 23:00 EDT
	if dial.Allowed(now, dial.Window{}, hw) {
		t.Fatal("23:00 allowed")
	}
	err := errOutsideHours("phoneNumber", "+12125550100", hw, now)
	for _, want := range []string{"it is Sun 23:00 in America/New_York", "08:00-21:00 on every day", "next 2026-03-09T12:00:00.000Z", "ignoreCallingHours"} {
		if !strings.Contains(err.Message, want) {
			t.Errorf("message %q lacks %q", err.Message, want)
		}
	}
	if got := dayNames([]int{1, 2, 3}); got != "Mon, Tue, Wed" {
		t.Errorf("dayNames: %s", got)
	}
}
