package calls

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/callstore"
)

// Compliance at schedule time: the do-not-call list refuses a number, and
// the organization's calling hours move a scheduled, batched or retried
// call to the next allowed moment (the dial queue checks both again at
// dial time) or refuse an immediate call outside them.

// MsgDoNotCall is the refusal of a listed number (a 400, or a failed batch item).
const MsgDoNotCall = "number is on the do-not-call list"

// errDoNotCall refuses a listed number in field.
func errDoNotCall(field string) *errs.Error { return invalid(field, MsgDoNotCall) }

// checkDNC refuses phone when it is on the organization's list.
func (s *Service) checkDNC(ctx context.Context, orgID, field, phone string) error {
	listed, err := s.db.Calls.DNCListed(ctx, orgID, phone)
	if err != nil {
		return err
	}
	if listed {
		return errDoNotCall(field)
	}
	return nil
}

// hoursWindow is the organization's calling hours in the recipient's zone
// (dial.RecipientZone), nil when they are off.
func hoursWindow(h dial.CallingHours, callTZ string, callMeta map[string]any, phone string) *dial.Window {
	if !h.Enabled {
		return nil
	}
	metaTZ, _ := callMeta["timezone"].(string)
	return h.Window(dial.RecipientZone(callTZ, metaTZ, phone, h.DefaultTimezone))
}

// errOutsideHours refuses an immediate call at now outside calling hours,
// saying when the recipient's hours open.
func errOutsideHours(field, phone string, hw *dial.Window, now time.Time) *errs.Error {
	loc, _ := dial.LoadZone(hw.TZ)
	msg := fmt.Sprintf("outside calling hours: it is %s in %s for %s; calls are allowed %s-%s on %s",
		now.In(loc).Format("Mon 15:04"), hw.TZ, phone, hw.DoNotCallBefore, hw.DoNotCallAfter, dayNames(hw.AllowedDays))
	if next, err := dial.NextAllowed(now, dial.Window{}, hw); err == nil {
		msg += " (next " + formatTime(next) + ")"
	}
	msg += "; schedule the call instead, or send ignoreCallingHours: true with an owner or admin key"
	return invalid(field, msg)
}

var weekdays = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// dayNames lists days as "every day" or "Mon, Tue, ...".
func dayNames(days []int) string {
	if len(days) == 0 || len(days) == 7 {
		return "every day"
	}
	names := make([]string, 0, len(days))
	for _, d := range days {
		if d >= 0 && d < 7 {
			names = append(names, weekdays[d])
		}
	}
	return strings.Join(names, ", ")
}

// orgHours reads the organization's calling hours.
func (s *Service) orgHours(ctx context.Context, orgID string) (dial.CallingHours, error) {
	return dial.OrgCallingHours(ctx, s.db.Calls, orgID)
}

// moveIntoHours moves at into the calling hours; a window that never opens
// is bad input in field.
func moveIntoHours(field string, at time.Time, hw *dial.Window) (time.Time, error) {
	if hw == nil {
		return at, nil
	}
	next, err := dial.NextAllowed(at, dial.Window{}, hw)
	if err != nil {
		return at, invalid(field, field+": "+planError(err))
	}
	return next, nil
}

// isWaiting reports whether a stored status waits for a dial.
func isWaiting(status string) bool {
	return status == callstore.CallInitiated || status == callstore.CallScheduled || status == callstore.CallQueued
}
