package dial

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

var fuzzZones = []string{
	"UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe",
	"America/Santiago",    // DST changes at midnight: whole local day starts inside a gap
	"Pacific/Apia",        // skipped 2011-12-30 entirely
	"America/St_Johns",    // -03:30 with DST
	"Antarctica/Troll",    // two-hour DST shift
	"Australia/Adelaide",  // +09:30 southern DST
	"Pacific/Chatham",     // +12:45/+13:45
	"America/Los_Angeles", // plain northern DST
}

// Instants near which interesting things happen; now is one of these plus a delta.
var fuzzBases = []string{
	"2026-03-08T07:00:00Z", // NY spring forward
	"2026-11-01T06:00:00Z", // NY fall back
	"2026-03-29T01:00:00Z", // EU spring forward
	"2026-10-25T01:00:00Z", // EU fall back
	"2026-04-04T15:00:00Z", // Lord Howe fall back
	"2026-10-03T15:30:00Z", // Lord Howe spring forward
	"2026-09-06T04:00:00Z", // Santiago spring forward (00:00 -> 01:00)
	"2026-04-05T03:00:00Z", // Santiago fall back
	"2011-12-29T10:00:00Z", // Apia skips a day
	"2026-06-10T12:00:00Z", // an ordinary Wednesday
	"2031-01-01T00:00:00Z", // beyond the zone tables' explicit transitions
}

// fuzzSpec is the raw fuzz input; the oracle below reads it directly rather
// than through Window.compile.
type fuzzSpec struct {
	loc                  *time.Location
	respect              bool
	bizLo, bizHi         int // seconds of day
	days                 uint8
	dailyLo, dailyHi     int // -1 unset
	absFrom, absTo       time.Time
	hasAbsFrom, hasAbsTo bool
}

// allowed is an independent statement of what an allowed instant is,
// judged with the standard library's own wall clock conversion.
func (s fuzzSpec) allowed(t time.Time) bool {
	if s.hasAbsFrom && t.Before(s.absFrom) {
		return false
	}
	if s.hasAbsTo && !t.Before(s.absTo) {
		return false
	}
	lt := t.In(s.loc)
	if s.days&(1<<uint(lt.Weekday())) == 0 {
		return false
	}
	sod := lt.Hour()*3600 + lt.Minute()*60 + lt.Second()
	if s.respect && (sod < s.bizLo || sod >= s.bizHi) {
		return false
	}
	if s.dailyLo >= 0 && sod < s.dailyLo {
		return false
	}
	if s.dailyHi >= 0 && sod >= s.dailyHi {
		return false
	}
	return true
}

func hhmmss(sec int) string {
	return fmt.Sprintf("%02d:%02d:%02d", sec/3600, sec/60%60, sec%60)
}

func FuzzWindow(f *testing.F) {
	f.Add(uint8(1), uint8(0), int32(-1800), uint16(150), true, uint16(540), uint16(1020), false, uint8(0x7f), int32(-1), int32(-1), int32(0), int32(0), false, false)
	f.Add(uint8(1), uint8(1), int32(-900), uint16(90), false, uint16(0), uint16(0), false, uint8(0x7f), int32(-1), int32(5400), int32(0), int32(0), false, false)
	f.Add(uint8(4), uint8(4), int32(0), uint16(105), false, uint16(0), uint16(0), false, uint8(0x7f), int32(-1), int32(6300), int32(0), int32(0), false, false)
	f.Add(uint8(4), uint8(5), int32(-3600), uint16(135), false, uint16(0), uint16(0), false, uint8(0x7f), int32(7800), int32(-1), int32(0), int32(0), false, false)
	f.Add(uint8(5), uint8(6), int32(-7200), uint16(0xffff), false, uint16(0), uint16(0), true, uint8(0x7f), int32(0), int32(3600), int32(0), int32(0), false, false)
	f.Add(uint8(6), uint8(8), int32(3600), uint16(600), true, uint16(480), uint16(1200), false, uint8(0x20), int32(-1), int32(-1), int32(0), int32(0), false, false)
	f.Add(uint8(3), uint8(9), int32(86400), uint16(0xffff), true, uint16(540), uint16(1020), true, uint8(0x7f), int32(-1), int32(-1), int32(172800), int32(400000), true, true)
	f.Add(uint8(2), uint8(3), int32(0), uint16(150), false, uint16(0), uint16(0), false, uint8(0x01), int32(-1), int32(-1), int32(0), int32(3600), false, true)
	f.Fuzz(func(t *testing.T, zone, base uint8, delta int32, sched uint16, respect bool, bs, be uint16,
		exWeekends bool, days uint8, dLo, dHi, fromDelta, toDelta int32, hasFrom, hasTo bool) {
		loc, err := LoadZone(fuzzZones[int(zone)%len(fuzzZones)])
		if err != nil {
			t.Fatal(err)
		}
		b, _ := time.Parse(time.RFC3339, fuzzBases[int(base)%len(fuzzBases)])
		now := b.Add(time.Duration(delta%(90*86400)) * time.Second)

		w := Window{TZ: loc.String(), RespectBusinessHours: respect, ExcludeWeekends: exWeekends}
		spec := fuzzSpec{loc: loc, respect: respect, dailyLo: -1, dailyHi: -1, days: days & 0x7f}
		if sched != 0xffff {
			w.LocalScheduleTime = hhmmss(int(sched) % 1440 * 60)[:5]
		}
		if respect || bs != 0 || be != 0 {
			w.BusinessHoursStart = hhmmss(int(bs) % 1440 * 60)[:5]
			w.BusinessHoursEnd = hhmmss(int(be) % 1440 * 60)[:5]
			spec.bizLo, spec.bizHi = int(bs)%1440*60, int(be)%1440*60
		}
		if days&0x80 == 0 {
			for d := range 7 {
				if days&(1<<d) != 0 {
					w.AllowedDays = append(w.AllowedDays, d)
				}
			}
			if w.AllowedDays == nil {
				w.AllowedDays = []int{}
			}
		} else {
			spec.days = 0x7f
		}
		if exWeekends {
			spec.days &^= 1<<0 | 1<<6
		}
		if dLo >= 0 {
			spec.dailyLo = int(dLo) % 86400
			w.DoNotCallBefore = hhmmss(spec.dailyLo)
		} else if hasFrom {
			spec.hasAbsFrom, spec.absFrom = true, now.Add(time.Duration(fromDelta)*time.Second)
			w.DoNotCallBefore = spec.absFrom.Format(time.RFC3339)
		}
		if dHi >= 0 {
			spec.dailyHi = int(dHi) % 86400
			w.DoNotCallAfter = hhmmss(spec.dailyHi)
		} else if hasTo {
			spec.hasAbsTo, spec.absTo = true, now.Add(time.Duration(toDelta)*time.Second)
			w.DoNotCallAfter = spec.absTo.Format(time.RFC3339)
		}

		if err := w.Validate(); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("validation error is not a FieldError: %v", err)
			}
			return
		}
		got, err := w.Next(now)
		if err != nil {
			if !errors.Is(err, ErrNoWindow) || !spec.hasAbsTo {
				t.Fatalf("Next(%v) of %+v: %v", now, w, err)
			}
			// The window really is closed: nothing allowed right up to absTo.
			for p := now; p.Before(spec.absTo) && p.Before(now.Add(8*24*time.Hour)); p = p.Add(5 * time.Minute) {
				if spec.allowed(p) {
					t.Fatalf("Next(%v) of %+v said closed, but %v is allowed", now, w, p)
				}
			}
			return
		}
		checkEarliest(t, spec, w, now, got, "Next")

		ini, err := w.Initial(now)
		if err != nil {
			if !errors.Is(err, ErrNoWindow) || !spec.hasAbsTo {
				t.Fatalf("Initial(%v) of %+v: %v", now, w, err)
			}
			return
		}
		if ini.Before(now) || !spec.allowed(ini) {
			t.Fatalf("Initial(%v) of %+v = %v (%v): before now or not allowed", now, w, ini, ini.In(loc))
		}
		if w.LocalScheduleTime == "" && !ini.Equal(got) {
			t.Fatalf("Initial without localScheduleTime %v != Next %v", ini, got)
		}
	})
}

// checkEarliest asserts got is allowed, not before now, and that nothing
// earlier (from now on) is: at a second and a minute before, and on a
// 5-minute scan of up to 8 days.
func checkEarliest(t *testing.T, spec fuzzSpec, w Window, now, got time.Time, what string) {
	t.Helper()
	show := func() string {
		return fmt.Sprintf("%s(%v) of %+v = %v (%v)", what, now.In(spec.loc), w, got, got.In(spec.loc))
	}
	if got.Before(now) {
		t.Fatalf("%s: before now", show())
	}
	if !spec.allowed(got) {
		t.Fatalf("%s: not allowed", show())
	}
	if got.Equal(now) {
		return
	}
	for _, d := range []time.Duration{time.Second, time.Minute} {
		p := got.Add(-d)
		if !p.Before(now) && spec.allowed(p) {
			t.Fatalf("%s: %v is earlier and allowed", show(), p.In(spec.loc))
		}
	}
	if spec.allowed(now) {
		t.Fatalf("%s: now itself is allowed", show())
	}
	end := now.Add(8 * 24 * time.Hour)
	for p := now.Truncate(5 * time.Minute).Add(5 * time.Minute); p.Before(got) && p.Before(end); p = p.Add(5 * time.Minute) {
		if spec.allowed(p) {
			t.Fatalf("%s: %v is earlier and allowed", show(), p.In(spec.loc))
		}
	}
}

// FuzzWindowParse feeds arbitrary strings into every text field of a Window:
// invalid input must give a *FieldError (never a panic), valid input a
// usable window.
func FuzzWindowParse(f *testing.F) {
	f.Add("America/New_York", "10:00", "09:00", "17:00", "08:00:30", "2026-06-10T17:30")
	f.Add("Asia/Kolkata", "", "", "", "2026-06-10T00:00:00+05:30", "")
	f.Add("../etc/passwd", "24:00", "9:00", "17:60", "tomorrow", "20:00")
	f.Add("Local", "\u200b10:00", "", "", "", "2026-13-01T00:00:00Z")
	f.Add("Etc/GMT-14", "23:59", "00:00", "23:59", "23:59:59", "00:00:01")
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, tz, lst, bs, be, before, after string) {
		if m, err := ParseHHMM(lst); err == nil && fmt.Sprintf("%02d:%02d", m/60, m%60) != lst {
			t.Fatalf("ParseHHMM(%q) = %d does not round-trip", lst, m)
		}
		w := Window{TZ: tz, LocalScheduleTime: lst, RespectBusinessHours: true, BusinessHoursStart: bs,
			BusinessHoursEnd: be, DoNotCallBefore: before, DoNotCallAfter: after}
		if err := w.Validate(); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" || fe.Msg == "" {
				t.Fatalf("%+v: error %v is not a FieldError", w, err)
			}
			return
		}
		for _, f := range []func(time.Time) (time.Time, error){w.Next, w.Initial} {
			got, err := f(now)
			if err != nil {
				if !errors.Is(err, ErrNoWindow) {
					t.Fatalf("%+v: %v", w, err)
				}
				continue
			}
			if got.Before(now) {
				t.Fatalf("%+v: %v before now", w, got)
			}
			if again, err := w.Next(got); err != nil || !again.Equal(got) {
				t.Fatalf("%+v: %v is not inside the window (Next gives %v, %v)", w, got, again, err)
			}
		}
	})
}
