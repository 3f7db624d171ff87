package dial

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	// The binary carries its own zone database so that contact time zones
	// resolve the same on every host, even one without /usr/share/zoneinfo.
	_ "time/tzdata"
)

// Window says when a contact may be called. It is stored with each call so
// that retries obey the same rules as the first attempt. The zero Window
// allows every instant (in UTC).
//
// An instant is allowed when all of these hold, judged on the wall clock of
// the zone TZ:
//   - its weekday is allowed (AllowedDays, ExcludeWeekends);
//   - its time of day is inside business hours [start, end) when
//     RespectBusinessHours (default 09:00-17:00; the end is exclusive);
//   - its time of day is inside the daily doNotCallBefore/After bounds
//     [before, after) when those are times of day (HH:mm or HH:mm:ss);
//   - it is inside [before, after) when those are full date-times
//     (RFC 3339, or YYYY-MM-DDTHH:mm[:ss] read in TZ).
//
// Daylight saving: allowed instants are judged on the wall clock, so a window
// that opens inside a spring-forward gap opens at the end of the gap. A local
// time that is asked for (LocalScheduleTime) but does not exist is moved
// forward by the length of the gap (02:30 on New York's spring-forward day is
// 03:30 EDT, as java.time does); an ambiguous one (fall-back overlap) is the
// first, earlier instant.
type Window struct {
	TZ                   string `json:"timezone,omitempty"`          // IANA zone; empty means UTC
	LocalScheduleTime    string `json:"localScheduleTime,omitempty"` // HH:mm, used by Initial
	RespectBusinessHours bool   `json:"respectBusinessHours,omitempty"`
	BusinessHoursStart   string `json:"businessHoursStart,omitempty"` // HH:mm, default 09:00
	BusinessHoursEnd     string `json:"businessHoursEnd,omitempty"`   // HH:mm, default 17:00, exclusive
	ExcludeWeekends      bool   `json:"excludeWeekends,omitempty"`
	// AllowedDays lists the allowed weekdays, 0 (Sunday) to 6 (Saturday).
	// nil allows every day; an explicitly empty list allows none and is invalid.
	AllowedDays     []int  `json:"allowedDays"`
	DoNotCallBefore string `json:"doNotCallBefore,omitempty"` // HH:mm[:ss] daily, or a date-time
	DoNotCallAfter  string `json:"doNotCallAfter,omitempty"`  // HH:mm[:ss] daily, or a date-time; exclusive
	// IgnoreCallingHours exempts the call from the organization's calling
	// hours (an owner or admin asked for it on an immediate call).
	IgnoreCallingHours bool `json:"ignoreCallingHours,omitempty"`
}

// FieldError is a validation problem with one named input field, so that the
// API can answer 400 naming the field (and re-prefix it with its own path).
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// ErrNoWindow means no allowed instant exists: the window closed for good (an
// absolute doNotCallAfter has passed) or nothing is allowed within MaxSearch.
var ErrNoWindow = errors.New("no allowed call time")

// MaxSearch bounds how far ahead Next looks before giving up with ErrNoWindow.
const MaxSearch = 400 * 24 * time.Hour

// Business hours used when RespectBusinessHours is set without times.
const (
	DefaultBusinessHoursStart = "09:00"
	DefaultBusinessHoursEnd   = "17:00"
)

const daySec = 86400

// ParseHHMM parses a strict "HH:mm" (00:00 to 23:59) into minutes after midnight.
func ParseHHMM(s string) (int, error) {
	if len(s) != 5 || s[2] != ':' {
		return 0, errors.New("must be HH:mm")
	}
	h, ok1 := twoDigits(s[0:2])
	m, ok2 := twoDigits(s[3:5])
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, errors.New("must be HH:mm (00:00 to 23:59)")
	}
	return h*60 + m, nil
}

func twoDigits(s string) (int, bool) {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

// parseTimeOfDay parses HH:mm or HH:mm:ss into seconds after midnight.
func parseTimeOfDay(s string) (int64, bool) {
	if len(s) == 8 {
		if s[5] != ':' {
			return 0, false
		}
		sec, ok := twoDigits(s[6:8])
		m, err := ParseHHMM(s[:5])
		if !ok || err != nil || sec > 59 {
			return 0, false
		}
		return int64(m)*60 + int64(sec), true
	}
	m, err := ParseHHMM(s)
	if err != nil {
		return 0, false
	}
	return int64(m) * 60, true
}

// bound is a parsed doNotCallBefore/After: a daily second of day or an instant.
type bound struct {
	set   bool
	daily bool
	sod   int64
	at    time.Time
}

func parseBound(field, s string, loc *time.Location) (bound, error) {
	if s == "" {
		return bound{}, nil
	}
	if sod, ok := parseTimeOfDay(s); ok {
		return bound{set: true, daily: true, sod: sod}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return bound{set: true, at: t}, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return bound{set: true, at: wallToInstant(loc, t.Unix())}, nil
		}
	}
	return bound{}, &FieldError{field, "must be a time of day (HH:mm or HH:mm:ss) or an ISO 8601 date-time (2026-05-01T09:00:00Z)"}
}

// rules is a validated Window ready for arithmetic.
type rules struct {
	loc      *time.Location
	days     uint8 // bit d set: weekday d allowed
	lo, hi   int64 // allowed seconds of day [lo, hi)
	sched    int64 // LocalScheduleTime in seconds, -1 if unset
	from, to bound // absolute bounds (daily ones are folded into lo/hi)
	// extra, when set, must allow an instant too: the organization's
	// calling hours, judged in the recipient's zone (NextAllowed).
	extra *rules
}

var zoneCache sync.Map // zone name -> *time.Location; LoadLocation re-reads tzdata each call

// LoadZone resolves an IANA zone name ("" and "UTC" are UTC), caching results.
func LoadZone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if l, ok := zoneCache.Load(name); ok {
		return l.(*time.Location), nil
	}
	// time.LoadLocation also accepts "Local" and file-system paths; a contact
	// zone must be a real IANA name.
	if name == "Local" || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return nil, fmt.Errorf("unknown IANA time zone %q", name)
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown IANA time zone %q", name)
	}
	zoneCache.Store(name, l)
	return l, nil
}

// Validate reports the first invalid field, as a *FieldError.
func (w Window) Validate() error {
	_, err := w.compile()
	return err
}

func (w Window) compile() (*rules, error) {
	r := &rules{days: 0x7f, lo: 0, hi: daySec, sched: -1}
	loc, err := LoadZone(w.TZ)
	if err != nil {
		return nil, &FieldError{"timezone", err.Error()}
	}
	r.loc = loc
	if w.LocalScheduleTime != "" {
		m, err := ParseHHMM(w.LocalScheduleTime)
		if err != nil {
			return nil, &FieldError{"localScheduleTime", err.Error()}
		}
		r.sched = int64(m) * 60
	}
	// Business hours are checked for format even when not respected: a
	// malformed value is bad input either way.
	bs, be := w.BusinessHoursStart, w.BusinessHoursEnd
	if bs == "" {
		bs = DefaultBusinessHoursStart
	}
	if be == "" {
		be = DefaultBusinessHoursEnd
	}
	start, err := ParseHHMM(bs)
	if err != nil {
		return nil, &FieldError{"businessHoursStart", err.Error()}
	}
	end, err := ParseHHMM(be)
	if err != nil {
		return nil, &FieldError{"businessHoursEnd", err.Error()}
	}
	if w.RespectBusinessHours {
		if end <= start {
			return nil, &FieldError{"businessHoursEnd", "must be later than businessHoursStart (" + bs + ")"}
		}
		r.lo, r.hi = int64(start)*60, int64(end)*60
	}
	if w.AllowedDays != nil {
		r.days = 0
		for _, d := range w.AllowedDays {
			if d < 0 || d > 6 {
				return nil, &FieldError{"allowedDays", "values must be 0 (Sunday) to 6 (Saturday)"}
			}
			r.days |= 1 << d
		}
	}
	if w.ExcludeWeekends {
		r.days &^= 1<<0 | 1<<6
	}
	if r.days == 0 {
		if w.AllowedDays != nil && w.ExcludeWeekends {
			return nil, &FieldError{"allowedDays", "no day left to call once weekends are excluded"}
		}
		return nil, &FieldError{"allowedDays", "must allow at least one day"}
	}
	before, err := parseBound("doNotCallBefore", w.DoNotCallBefore, loc)
	if err != nil {
		return nil, err
	}
	after, err := parseBound("doNotCallAfter", w.DoNotCallAfter, loc)
	if err != nil {
		return nil, err
	}
	if before.daily {
		r.lo = max(r.lo, before.sod)
	} else {
		r.from = before
	}
	if after.daily {
		r.hi = min(r.hi, after.sod)
	} else {
		r.to = after
	}
	if r.lo >= r.hi {
		if before.daily && after.daily && after.sod <= before.sod {
			return nil, &FieldError{"doNotCallAfter", "must be later than doNotCallBefore"}
		}
		field := "doNotCallAfter"
		if !after.daily {
			field = "doNotCallBefore"
		}
		return nil, &FieldError{field, "leaves no time of day to call within business hours"}
	}
	if r.from.set && r.to.set && !r.from.at.Before(r.to.at) {
		return nil, &FieldError{"doNotCallAfter", "must be later than doNotCallBefore"}
	}
	return r, nil
}

// Next returns the earliest allowed instant at or after t, in UTC. It returns
// an error wrapping ErrNoWindow when none exists (absolute doNotCallAfter
// passed, or nothing within MaxSearch), or a *FieldError for an invalid Window.
func (w Window) Next(t time.Time) (time.Time, error) {
	r, err := w.compile()
	if err != nil {
		return time.Time{}, err
	}
	return r.next(t)
}

// Initial returns the first time of a new call, at or after now: without
// LocalScheduleTime it is Next(now). With it, it is that local time on the
// first allowed day where it is not before now (nor before an absolute
// doNotCallBefore), then pushed into the window by Next (so 08:00 with
// business hours 09:00-17:00 gives 09:00 that day).
func (w Window) Initial(now time.Time) (time.Time, error) {
	r, err := w.compile()
	if err != nil {
		return time.Time{}, err
	}
	return r.initial(now)
}

func (r *rules) initial(now time.Time) (time.Time, error) {
	if r.sched < 0 {
		return r.next(now)
	}
	start := now
	if r.from.set && r.from.at.After(start) {
		start = r.from.at
	}
	day := floorDiv(localWall(start, r.loc), daySec)
	for d := day; d <= day+MaxSearchDays; d++ {
		if !r.dayOK(d) {
			continue
		}
		target := wallToInstant(r.loc, d*daySec+r.sched)
		if target.Before(start) {
			continue
		}
		return r.next(target)
	}
	return time.Time{}, fmt.Errorf("%w within %d days", ErrNoWindow, MaxSearchDays)
}

// MaxSearchDays is MaxSearch in days.
const MaxSearchDays = int64(MaxSearch / (24 * time.Hour))

func (r *rules) dayOK(civilDay int64) bool {
	wd := floorMod(civilDay+4, 7) // 1970-01-01 was a Thursday (4)
	return r.days&(1<<wd) != 0
}

// maxMeet bounds how often next alternates between the rules and extra:
// two weekly patterns that meet at all meet within a few dozen steps.
const maxMeet = 64

// next is the earliest instant at or after t that the rules, and extra
// when set, both allow: each side in turn jumps to its next allowed
// instant until neither moves (neither can skip a common instant, as each
// jump lands on the earliest one it allows).
func (r *rules) next(t time.Time) (time.Time, error) {
	if r.extra == nil {
		return r.nextOwn(t)
	}
	for range maxMeet {
		a, err := r.nextOwn(t)
		if err != nil {
			return time.Time{}, err
		}
		b, err := r.extra.next(a)
		if err != nil {
			return time.Time{}, err
		}
		if b.Equal(a) {
			return a, nil
		}
		t = b
	}
	return time.Time{}, fmt.Errorf("%w: the call window and the calling hours never meet", ErrNoWindow)
}

// nextOwn walks zone periods (stretches of constant UTC offset, where wall
// clock and instant move together): inside one period the earliest allowed
// wall time maps straight to an instant; if that instant falls past the
// period's end, the search restarts at the transition with the new offset.
// That handles both gaps (a window opening inside one opens at its end) and
// overlaps (the repeated hour is seen twice) without special cases.
func (r *rules) nextOwn(t time.Time) (time.Time, error) {
	if r.from.set && t.Before(r.from.at) {
		t = r.from.at
	}
	limit := t.Add(MaxSearch)
	for range 1000 {
		lt := t.In(r.loc)
		_, off := lt.Zone()
		_, end := lt.ZoneBounds()
		wall := t.Unix() + int64(off)
		day := floorDiv(wall, daySec)
		sod := wall - day*daySec
		cand := t
		if !r.dayOK(day) || sod < r.lo || sod >= r.hi {
			d := day
			if !r.dayOK(day) || sod >= r.hi {
				d++
				for !r.dayOK(d) { // at most 6 steps: some day is allowed
					d++
				}
			}
			cand = time.Unix(d*daySec+r.lo-int64(off), 0)
		}
		if !end.IsZero() && !cand.Before(end) {
			t = end
			continue
		}
		if cand.After(limit) {
			break
		}
		if r.to.set && !cand.Before(r.to.at) {
			return time.Time{}, fmt.Errorf("%w before doNotCallAfter %s", ErrNoWindow, r.to.at.UTC().Format(time.RFC3339))
		}
		return cand.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%w within %d days", ErrNoWindow, MaxSearchDays)
}

// localWall is t's wall clock in loc as seconds since 1970-01-01T00:00 (a
// "civil" timestamp that ignores the offset).
func localWall(t time.Time, loc *time.Location) int64 {
	_, off := t.In(loc).Zone()
	return t.Unix() + int64(off)
}

func offsetAt(sec int64, loc *time.Location) int64 {
	_, off := time.Unix(sec, 0).In(loc).Zone()
	return int64(off)
}

// wallToInstant converts a civil timestamp in loc to an instant. A wall time
// in a spring-forward gap is moved forward by the gap (it is read with the
// offset in force before the transition); an ambiguous one in a fall-back
// overlap is the earlier instant. (time.Date guarantees neither.)
func wallToInstant(loc *time.Location, wall int64) time.Time {
	// Real instants for this wall time lie within about 14 hours of it, so
	// the offsets a day either side bracket any single transition.
	o1 := offsetAt(wall-daySec, loc)
	o2 := offsetAt(wall+daySec, loc)
	c1, c2 := wall-o1, wall-o2
	ok1 := offsetAt(c1, loc) == o1
	ok2 := offsetAt(c2, loc) == o2
	switch {
	case ok1 && ok2:
		return time.Unix(min(c1, c2), 0).UTC()
	case ok1:
		return time.Unix(c1, 0).UTC()
	case ok2:
		return time.Unix(c2, 0).UTC()
	case o1 != o2:
		return time.Unix(c1, 0).UTC() // gap: earlier offset, lands after the transition
	}
	// Two transitions within two days (historical oddities): settle on the
	// offset in force at the first guess.
	return time.Unix(wall-offsetAt(c1, loc), 0).UTC()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
