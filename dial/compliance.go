package dial

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/agentd/agentd/storage/callstore"
)

// The dial queue's compliance checks: a claimed call is dialled only when
// its number is not on the organization's do-not-call list and, with the
// organization's calling hours on, when the recipient's local time is
// inside them; otherwise the claim is given back (failed do_not_call, or
// deferred to the next allowed moment) without spending an attempt.

// ReasonOutsideHours fails a call whose window and calling hours never meet.
const ReasonOutsideHours = "no allowed call time within the calling hours"

// admit checks a claimed call at now. It returns nil when the call may be
// dialled, else what was done instead (the claim is already given back).
func (q *Queue) admit(ctx context.Context, c callstore.Call, now time.Time, slot callstore.Slot) *callstore.Undo {
	u := q.verdict(ctx, c, now)
	if u == nil {
		return nil
	}
	u.Slot = slot
	ok, err := q.db.Calls.UndoClaim(ctx, c.ID, c.ClaimToken, *u)
	if err != nil {
		q.log.Error("dial queue: give back claim", "call", c.ID, "err", err)
		return u
	}
	if u.Status == callstore.CallFailed {
		q.log.Info("call not dialled", "call", c.ID, "reason", u.Reason, "settled", ok)
	} else {
		q.log.Info("call deferred to calling hours", "call", c.ID, "due", u.DueAt.Format(time.RFC3339), "settled", ok)
		if q.cfg.OnRetry != nil {
			q.cfg.OnRetry()
		}
	}
	return u
}

// verdict decides on a claimed call; nil means dial it.
func (q *Queue) verdict(ctx context.Context, c callstore.Call, now time.Time) *callstore.Undo {
	if c.Direction == "inbound" {
		return nil
	}
	listed, err := q.db.Calls.DNCListed(ctx, c.OrgID, c.PhoneNumber)
	if err != nil {
		q.log.Error("dial queue: do-not-call check", "call", c.ID, "err", err)
	}
	if listed {
		return &callstore.Undo{Status: callstore.CallFailed, Reason: callstore.ReasonDoNotCall, At: now}
	}
	h := q.hours.get(ctx, c.OrgID, now)
	if !h.Enabled {
		return nil
	}
	w := callWindow(c)
	if w.IgnoreCallingHours {
		return nil
	}
	hw := h.Window(CallZone(c, w, h.DefaultTimezone))
	if Allowed(now, Window{}, hw) {
		return nil
	}
	next, err := NextAllowed(now, w, hw)
	if err != nil {
		return &callstore.Undo{Status: callstore.CallFailed, Reason: ReasonOutsideHours, At: now}
	}
	return &callstore.Undo{Status: callstore.CallScheduled, DueAt: next, At: now}
}

// RetryTime is when a stored call's next attempt goes after an attempt
// that ended with status at endedAt, or nil for none: the policy must
// retry on that outcome with attempts left; the time obeys the call's
// window and, when on, the organization's calling hours h.
func RetryTime(c callstore.Call, status string, endedAt time.Time, h CallingHours) (*time.Time, error) {
	if len(c.RetryPolicy) == 0 {
		return nil, nil
	}
	var p RetryPolicy
	if err := json.Unmarshal(c.RetryPolicy, &p); err != nil {
		return nil, fmt.Errorf("stored retry policy: %w", err)
	}
	if !p.ShouldRetry(c.Attempts, status) {
		return nil, nil
	}
	w := callWindow(c)
	at, err := p.NextAttempt(c.Attempts, endedAt, w)
	if err != nil {
		return nil, err
	}
	if !w.IgnoreCallingHours {
		if hw := h.Window(CallZone(c, w, h.DefaultTimezone)); hw != nil {
			if at, err = NextAllowed(at, w, hw); err != nil {
				return nil, err
			}
		}
	}
	return &at, nil
}

// callWindow is a stored call's window (the zero Window when none, or
// when it does not decode: then the call is simply not restricted).
func callWindow(c callstore.Call) Window {
	var w Window
	if len(c.Window) > 0 {
		_ = json.Unmarshal(c.Window, &w)
	}
	return w
}

// CallZone is the recipient's zone of a stored call (RecipientZone): its
// window's zone (the item's timezone or callMetadata.timezone it was
// planned in), callMetadata.timezone, the number's zone, defaultTZ.
func CallZone(c callstore.Call, w Window, defaultTZ string) string {
	var meta struct {
		Timezone string `json:"timezone"`
	}
	if len(c.CallMetadata) > 0 {
		_ = json.Unmarshal(c.CallMetadata, &meta)
	}
	return RecipientZone(w.TZ, meta.Timezone, c.PhoneNumber, defaultTZ)
}

// OrgCallingHours reads an organization's calling hours (the defaults,
// off, when it never set them).
func OrgCallingHours(ctx context.Context, calls *callstore.Calls, orgID string) (CallingHours, error) {
	s, err := calls.GetOrgSettings(ctx, orgID)
	if err != nil {
		return DefaultCallingHours(), err
	}
	return ParseCallingHours(s.CallingHours)
}

// hoursCache keeps each organization's calling hours for ttl, so the
// checks at dial time do not read the settings for every call.
type hoursCache struct {
	calls *callstore.Calls
	ttl   time.Duration
	mu    sync.Mutex
	m     map[string]hoursEntry
}

type hoursEntry struct {
	h  CallingHours
	at time.Time
}

// get is the organization's calling hours as of at most ttl ago; a read
// error counts as the defaults (off) for this once, and is not cached.
func (c *hoursCache) get(ctx context.Context, orgID string, now time.Time) CallingHours {
	c.mu.Lock()
	e, ok := c.m[orgID]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl && !now.Before(e.at) {
		return e.h
	}
	h, err := OrgCallingHours(ctx, c.calls, orgID)
	if err != nil {
		return h
	}
	c.mu.Lock()
	if len(c.m) > 10000 {
		clear(c.m)
	}
	c.m[orgID] = hoursEntry{h: h, at: now}
	c.mu.Unlock()
	return h
}
