package dial

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// CallingHours is an organization's calling-hours rule, the common TCPA
// one by default: calls are placed only between Start and End (exclusive)
// on Days, judged on the recipient's local clock. Off unless Enabled, so
// that a first trial call is never silently delayed.
type CallingHours struct {
	Enabled bool   `json:"enabled"`
	Start   string `json:"start"` // HH:mm
	End     string `json:"end"`   // HH:mm, exclusive, after Start
	Days    []int  `json:"days"`  // 0 (Sunday) to 6 (Saturday)
	// DefaultTimezone is the recipient's zone when neither the call nor
	// the number tells it (IANA).
	DefaultTimezone string `json:"defaultTimezone"`
}

// Calling-hours defaults.
const (
	DefaultCallingStart = "08:00"
	DefaultCallingEnd   = "21:00"
)

// DefaultCallingHours is the rule of an organization that never set one:
// off, 08:00 to 21:00 every day, UTC.
func DefaultCallingHours() CallingHours {
	return CallingHours{Start: DefaultCallingStart, End: DefaultCallingEnd, Days: []int{0, 1, 2, 3, 4, 5, 6}, DefaultTimezone: "UTC"}
}

// ParseCallingHours reads stored calling hours over the defaults (nil or
// empty: the defaults).
func ParseCallingHours(raw []byte) (CallingHours, error) {
	h := DefaultCallingHours()
	if len(raw) == 0 {
		return h, nil
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return DefaultCallingHours(), fmt.Errorf("stored calling hours: %w", err)
	}
	return h, nil
}

// Validate reports the first invalid field as a *FieldError (start, end,
// days, defaultTimezone).
func (h CallingHours) Validate() error {
	start, err := ParseHHMM(h.Start)
	if err != nil {
		return &FieldError{"start", err.Error()}
	}
	end, err := ParseHHMM(h.End)
	if err != nil {
		return &FieldError{"end", err.Error()}
	}
	if end <= start {
		return &FieldError{"end", "must be later than start (" + h.Start + "); calling hours do not span midnight"}
	}
	if len(h.Days) == 0 {
		return &FieldError{"days", "must list at least one day, 0 (Sunday) to 6 (Saturday)"}
	}
	for _, d := range h.Days {
		if d < 0 || d > 6 {
			return &FieldError{"days", "values must be 0 (Sunday) to 6 (Saturday)"}
		}
	}
	if _, err := LoadZone(h.DefaultTimezone); err != nil || h.DefaultTimezone == "" {
		return &FieldError{"defaultTimezone", "must be an IANA time zone such as America/New_York"}
	}
	return nil
}

// Normalize sorts and de-duplicates Days.
func (h *CallingHours) Normalize() {
	h.Days = slices.Clone(h.Days)
	slices.Sort(h.Days)
	h.Days = slices.Compact(h.Days)
}

// Window is the rule as a window in zone, nil when calling hours are off.
func (h CallingHours) Window(zone string) *Window {
	if !h.Enabled {
		return nil
	}
	days := h.Days
	if days == nil {
		days = []int{0, 1, 2, 3, 4, 5, 6}
	}
	return &Window{TZ: zone, DoNotCallBefore: h.Start, DoNotCallAfter: h.End, AllowedDays: days}
}

// RecipientZone is the zone calling hours are judged in: the call's own
// timezone, else callMetadata.timezone, else the zone of the number when
// it has exactly one (NumberZone), else the organization's default.
func RecipientZone(callTZ, metaTZ, phone, defaultTZ string) string {
	for _, z := range []string{callTZ, metaTZ} {
		if z != "" {
			if _, err := LoadZone(z); err == nil {
				return z
			}
		}
	}
	if z := NumberZone(phone); z != "" {
		return z
	}
	if defaultTZ == "" {
		return "UTC"
	}
	return defaultTZ
}

// NextAllowed is the earliest instant at or after t allowed by the window
// w and, when not nil, by hours too (a second window, possibly in another
// zone). It errs with ErrNoWindow when the two never meet.
func NextAllowed(t time.Time, w Window, hours *Window) (time.Time, error) {
	r, err := w.compile()
	if err != nil {
		return time.Time{}, err
	}
	if hours != nil {
		if r.extra, err = hours.compile(); err != nil {
			return time.Time{}, err
		}
	}
	return r.next(t)
}

// Allowed reports whether t itself is allowed by w and hours.
func Allowed(t time.Time, w Window, hours *Window) bool {
	next, err := NextAllowed(t, w, hours)
	return err == nil && !next.After(t)
}
