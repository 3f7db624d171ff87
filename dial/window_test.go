package dial

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ts(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return v
}

// Calendar facts used below (checked with zdump and date):
//   - 2026-03-06 is a Friday, 2026-06-10 a Wednesday, 2026-06-15 a Monday.
//   - New York: 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z); 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z).
//   - Berlin: 2026-03-29 02:00 CET -> 03:00 CEST; 2026-10-25 03:00 CEST -> 02:00 CET.
//   - Lord Howe: 2026-04-05 02:00 +11 -> 01:30 +10:30 (15:00Z on the 4th);
//     2026-10-04 02:00 +10:30 -> 02:30 +11 (15:30Z on the 3rd).
//   - Kolkata: +05:30 all year.
func TestWindowNext(t *testing.T) {
	ny := "America/New_York"
	biz := func(tz string) Window { return Window{TZ: tz, RespectBusinessHours: true} }
	bizNoWeekend := func(tz string) Window {
		return Window{TZ: tz, RespectBusinessHours: true, ExcludeWeekends: true}
	}
	cases := []struct {
		name    string
		w       Window
		now     string
		initial bool // call Initial instead of Next
		want    string
		wantErr string
	}{
		{"zero window allows every instant", Window{}, "2026-03-06T16:59:59.25Z", false, "2026-03-06T16:59:59.25Z", ""},
		{"NY Friday 16:59 is inside 09-17", bizNoWeekend(ny), "2026-03-06T16:59:00-05:00", false, "2026-03-06T16:59:00-05:00", ""},
		{"NY Friday 16:59:59.9 is still before the exclusive end", bizNoWeekend(ny), "2026-03-06T16:59:59.9-05:00", false, "2026-03-06T16:59:59.9-05:00", ""},
		{"NY Friday 17:00 exactly is closed (end exclusive); weekend skipped; Monday 09:00 is already EDT", bizNoWeekend(ny), "2026-03-06T17:00:00-05:00", false, "2026-03-09T09:00:00-04:00", ""},
		{"NY Friday 17:00 without excludeWeekends opens Saturday 09:00 EST", biz(ny), "2026-03-06T17:00:00-05:00", false, "2026-03-07T09:00:00-05:00", ""},
		{"now exactly at opening is returned as is", biz(ny), "2026-03-06T09:00:00-05:00", false, "2026-03-06T09:00:00-05:00", ""},
		{"half a second before opening moves to the opening second", biz(ny), "2026-03-06T08:59:59.5-05:00", false, "2026-03-06T09:00:00-05:00", ""},
		{"NY spring-forward: a window opening at 02:00 (inside the gap) opens when the gap ends, 03:00 EDT",
			Window{TZ: ny, DoNotCallBefore: "02:00", DoNotCallAfter: "04:00"}, "2026-03-08T01:30:00-05:00", false, "2026-03-08T03:00:00-04:00", ""},
		{"NY fall-back: 01:45 EDT is past a 01:30 daily end, but the clock returns to 01:00 EST, which is allowed",
			Window{TZ: ny, DoNotCallAfter: "01:30"}, "2026-11-01T01:45:00-04:00", false, "2026-11-01T01:00:00-05:00", ""},
		{"NY fall-back: second 01:30 EST is past the end too, so next day 00:00 EST",
			Window{TZ: ny, DoNotCallAfter: "01:30"}, "2026-11-01T01:30:00-05:00", false, "2026-11-02T00:00:00-05:00", ""},
		{"Lord Howe fall-back: 01:50 +11 is past a 01:45 end; at 15:00Z the clock shows 01:30 +10:30, allowed",
			Window{TZ: "Australia/Lord_Howe", DoNotCallAfter: "01:45"}, "2026-04-05T01:50:00+11:00", false, "2026-04-05T01:30:00+10:30", ""},
		{"Lord Howe spring-forward: window from 02:10 opens at the end of the 30-minute gap, 02:30 +11",
			Window{TZ: "Australia/Lord_Howe", DoNotCallBefore: "02:10"}, "2026-10-04T01:00:00+10:30", false, "2026-10-04T02:30:00+11:00", ""},
		{"Kolkata 17:30 IST (12:00Z Friday) is after 17:00; Saturday allowed -> Saturday 09:00 IST",
			biz("Asia/Kolkata"), "2026-06-05T12:00:00Z", false, "2026-06-06T09:00:00+05:30", ""},
		{"Kolkata same but weekends excluded -> Monday 09:00 IST (03:30Z)",
			bizNoWeekend("Asia/Kolkata"), "2026-06-05T12:00:00Z", false, "2026-06-08T03:30:00Z", ""},
		{"Kolkata 08:30 IST (03:00Z) opens at 09:00 IST, a half-hour zone so 03:30Z",
			biz("Asia/Kolkata"), "2026-06-10T03:00:00Z", false, "2026-06-10T03:30:00Z", ""},
		{"Berlin allowedDays Tue+Thu, 10-16: Wednesday 10:00 -> Thursday 10:00 CEST",
			Window{TZ: "Europe/Berlin", RespectBusinessHours: true, BusinessHoursStart: "10:00", BusinessHoursEnd: "16:00", AllowedDays: []int{2, 4}},
			"2026-06-10T10:00:00+02:00", false, "2026-06-11T10:00:00+02:00", ""},
		{"Berlin allowedDays Tue+Thu: Thursday 16:00 (end) -> next Tuesday 10:00",
			Window{TZ: "Europe/Berlin", RespectBusinessHours: true, BusinessHoursStart: "10:00", BusinessHoursEnd: "16:00", AllowedDays: []int{2, 4}},
			"2026-06-11T16:00:00+02:00", false, "2026-06-16T10:00:00+02:00", ""},
		{"Berlin daily doNotCallAfter 20:00:30 with seconds: 20:00:29 allowed",
			Window{TZ: "Europe/Berlin", DoNotCallBefore: "08:00", DoNotCallAfter: "20:00:30"}, "2026-06-10T20:00:29+02:00", false, "2026-06-10T20:00:29+02:00", ""},
		{"Berlin daily doNotCallAfter 20:00:30 is exclusive: 20:00:30 -> next day 08:00",
			Window{TZ: "Europe/Berlin", DoNotCallBefore: "08:00", DoNotCallAfter: "20:00:30"}, "2026-06-10T20:00:30+02:00", false, "2026-06-11T08:00:00+02:00", ""},
		{"business hours 09-17 intersect doNotCallAfter 12:00: 12:00 Wednesday -> Thursday 09:00",
			Window{TZ: ny, RespectBusinessHours: true, DoNotCallAfter: "12:00"}, "2026-06-10T12:00:00-04:00", false, "2026-06-11T09:00:00-04:00", ""},
		{"business hours 09-17 intersect doNotCallBefore 10:30: 09:15 -> 10:30",
			Window{TZ: ny, RespectBusinessHours: true, DoNotCallBefore: "10:30"}, "2026-06-10T09:15:00-04:00", false, "2026-06-10T10:30:00-04:00", ""},
		{"absolute doNotCallBefore Monday 00:00Z: first business moment after is Monday 09:00 EDT",
			Window{TZ: ny, RespectBusinessHours: true, DoNotCallBefore: "2026-06-15T00:00:00Z"}, "2026-06-10T10:00:00-04:00", false, "2026-06-15T09:00:00-04:00", ""},
		{"absolute doNotCallBefore inside business hours is itself the answer",
			Window{TZ: ny, RespectBusinessHours: true, DoNotCallBefore: "2026-06-15T14:20:00Z"}, "2026-06-10T10:00:00-04:00", false, "2026-06-15T10:20:00-04:00", ""},
		{"absolute doNotCallAfter 21:00Z already passed at 17:30 EDT (21:30Z): no time left",
			Window{TZ: ny, DoNotCallAfter: "2026-06-10T21:00:00Z"}, "2026-06-10T17:30:00-04:00", false, "", "before doNotCallAfter"},
		{"absolute doNotCallAfter in zone-local form 2026-06-10T17:30 (NY): 17:29 allowed",
			Window{TZ: ny, DoNotCallAfter: "2026-06-10T17:30"}, "2026-06-10T17:29:00-04:00", false, "2026-06-10T17:29:00-04:00", ""},
		{"absolute doNotCallAfter is exclusive: 17:30 itself is too late",
			Window{TZ: ny, DoNotCallAfter: "2026-06-10T17:30"}, "2026-06-10T17:30:00-04:00", false, "", "no allowed call time"},
		{"absolute doNotCallAfter Friday 18:00 with business hours: Friday 17:00 has no business time left",
			Window{TZ: ny, RespectBusinessHours: true, DoNotCallAfter: "2026-06-05T18:00:00-04:00"}, "2026-06-05T17:00:00-04:00", false, "", "no allowed call time"},

		// Initial: localScheduleTime.
		{"Initial without localScheduleTime is Next(now)", bizNoWeekend(ny), "2026-03-06T17:00:00-05:00", true, "2026-03-09T09:00:00-04:00", ""},
		{"Initial NY 02:30 on spring-forward day does not exist: moved forward by the 1h gap to 03:30 EDT",
			Window{TZ: ny, LocalScheduleTime: "02:30"}, "2026-03-08T00:00:00-05:00", true, "2026-03-08T03:30:00-04:00", ""},
		{"Initial NY 01:30 on fall-back day is ambiguous: first occurrence, 01:30 EDT",
			Window{TZ: ny, LocalScheduleTime: "01:30"}, "2026-11-01T00:00:00-04:00", true, "2026-11-01T01:30:00-04:00", ""},
		{"Initial NY 01:30 when now is the second 01:30 (EST): the first is past, so tomorrow 01:30 EST",
			Window{TZ: ny, LocalScheduleTime: "01:30"}, "2026-11-01T01:30:00-05:00", true, "2026-11-02T01:30:00-05:00", ""},
		{"Initial Lord Howe 02:15 in the 30-minute spring-forward gap becomes 02:45 +11",
			Window{TZ: "Australia/Lord_Howe", LocalScheduleTime: "02:15"}, "2026-10-04T00:00:00+10:30", true, "2026-10-04T02:45:00+11:00", ""},
		{"Initial Lord Howe 01:45 on fall-back day is ambiguous: first, 01:45 +11",
			Window{TZ: "Australia/Lord_Howe", LocalScheduleTime: "01:45"}, "2026-04-05T00:00:00+11:00", true, "2026-04-05T01:45:00+11:00", ""},
		{"Initial Berlin 02:30 on spring-forward day becomes 03:30 CEST",
			Window{TZ: "Europe/Berlin", LocalScheduleTime: "02:30"}, "2026-03-28T20:00:00+01:00", true, "2026-03-29T03:30:00+02:00", ""},
		{"Initial Berlin 02:30 on fall-back day: first occurrence, CEST",
			Window{TZ: "Europe/Berlin", LocalScheduleTime: "02:30"}, "2026-10-24T20:00:00+02:00", true, "2026-10-25T02:30:00+02:00", ""},
		{"Initial 10:00 now Friday 11:00 with weekends excluded: Monday 10:00 (not Monday 00:00)",
			Window{TZ: ny, LocalScheduleTime: "10:00", ExcludeWeekends: true}, "2026-06-05T11:00:00-04:00", true, "2026-06-08T10:00:00-04:00", ""},
		{"Initial 10:00 now exactly 10:00 is today",
			Window{TZ: ny, LocalScheduleTime: "10:00"}, "2026-06-10T10:00:00-04:00", true, "2026-06-10T10:00:00-04:00", ""},
		{"Initial 08:00 with business hours is pushed to 09:00 that day",
			Window{TZ: ny, LocalScheduleTime: "08:00", RespectBusinessHours: true}, "2026-06-10T06:00:00-04:00", true, "2026-06-10T09:00:00-04:00", ""},
		{"Initial 18:00 with business hours is pushed to next day 09:00",
			Window{TZ: ny, LocalScheduleTime: "18:00", RespectBusinessHours: true}, "2026-06-10T06:00:00-04:00", true, "2026-06-11T09:00:00-04:00", ""},
		{"Initial Kolkata 10:00 from 12:00Z Wednesday (17:30 IST): Thursday 10:00 IST = 04:30Z",
			Window{TZ: "Asia/Kolkata", LocalScheduleTime: "10:00"}, "2026-06-10T12:00:00Z", true, "2026-06-11T04:30:00Z", ""},
		{"Initial 10:00 not before absolute 2026-06-15T12:00Z: Monday 10:00 EDT is 14:00Z, fine",
			Window{TZ: ny, LocalScheduleTime: "10:00", DoNotCallBefore: "2026-06-15T12:00:00Z"}, "2026-06-10T06:00:00-04:00", true, "2026-06-15T10:00:00-04:00", ""},
		{"Initial 10:00 not before absolute 2026-06-15T15:00Z: Monday 10:00 EDT (14:00Z) too early, Tuesday 10:00",
			Window{TZ: ny, LocalScheduleTime: "10:00", DoNotCallBefore: "2026-06-15T15:00:00Z"}, "2026-06-10T06:00:00-04:00", true, "2026-06-16T10:00:00-04:00", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := ts(t, c.now)
			f := c.w.Next
			if c.initial {
				f = c.w.Initial
			}
			got, err := f(now)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrNoWindow) {
					t.Fatalf("got %v, %v; want ErrNoWindow error containing %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := ts(t, c.want)
			if !got.Equal(want) {
				loc, _ := LoadZone(c.w.TZ)
				t.Fatalf("got %s (%s), want %s", got.Format(time.RFC3339Nano), got.In(loc).Format(time.RFC3339Nano), c.want)
			}
			if got.Location() != time.UTC {
				t.Fatalf("result not in UTC: %v", got.Location())
			}
		})
	}
}

func TestWindowValidate(t *testing.T) {
	cases := []struct {
		name  string
		w     Window
		field string // "" = valid
		msg   string
	}{
		{"zero window is valid", Window{}, "", ""},
		{"full valid window", Window{TZ: "Europe/Berlin", LocalScheduleTime: "10:00", RespectBusinessHours: true, BusinessHoursStart: "08:30", BusinessHoursEnd: "18:00", ExcludeWeekends: true, AllowedDays: []int{1, 2, 3}, DoNotCallBefore: "09:00:30", DoNotCallAfter: "2027-01-01T00:00:00Z"}, "", ""},
		{"unknown zone", Window{TZ: "Mars/Olympus"}, "timezone", "unknown IANA time zone"},
		{"Local is not a contact zone", Window{TZ: "Local"}, "timezone", "unknown IANA"},
		{"path is not a zone", Window{TZ: "../../etc/passwd"}, "timezone", "unknown IANA"},
		{"single-digit hour", Window{LocalScheduleTime: "9:00"}, "localScheduleTime", "must be HH:mm"},
		{"24:00 is out of range", Window{LocalScheduleTime: "24:00"}, "localScheduleTime", "must be HH:mm"},
		{"minute 60", Window{LocalScheduleTime: "12:60"}, "localScheduleTime", "must be HH:mm"},
		{"seconds not allowed in localScheduleTime", Window{LocalScheduleTime: "12:00:00"}, "localScheduleTime", "must be HH:mm"},
		{"malformed business start even when not respected", Window{BusinessHoursStart: "9am"}, "businessHoursStart", "must be HH:mm"},
		{"business end equal to start", Window{RespectBusinessHours: true, BusinessHoursStart: "09:00", BusinessHoursEnd: "09:00"}, "businessHoursEnd", "later than businessHoursStart"},
		{"business end before default start", Window{RespectBusinessHours: true, BusinessHoursEnd: "08:00"}, "businessHoursEnd", "later than businessHoursStart (09:00)"},
		{"explicitly empty allowedDays", Window{AllowedDays: []int{}}, "allowedDays", "at least one day"},
		{"allowedDays 7", Window{AllowedDays: []int{1, 7}}, "allowedDays", "0 (Sunday) to 6 (Saturday)"},
		{"allowedDays only weekend and weekends excluded", Window{AllowedDays: []int{0, 6}, ExcludeWeekends: true}, "allowedDays", "weekends are excluded"},
		{"doNotCallBefore garbage", Window{DoNotCallBefore: "tomorrow"}, "doNotCallBefore", "time of day"},
		{"doNotCallAfter 25:00", Window{DoNotCallAfter: "25:00"}, "doNotCallAfter", "time of day"},
		{"daily after before before", Window{DoNotCallBefore: "20:00", DoNotCallAfter: "08:00"}, "doNotCallAfter", "later than doNotCallBefore"},
		{"absolute after before before", Window{DoNotCallBefore: "2026-06-10T10:00:00Z", DoNotCallAfter: "2026-06-10T09:00:00Z"}, "doNotCallAfter", "later than doNotCallBefore"},
		{"business hours and doNotCallAfter do not meet", Window{RespectBusinessHours: true, DoNotCallAfter: "08:00"}, "doNotCallAfter", "no time of day"},
		{"business hours and doNotCallBefore do not meet", Window{RespectBusinessHours: true, DoNotCallBefore: "17:00"}, "doNotCallBefore", "no time of day"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.w.Validate()
			if c.field == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a FieldError on %s", err, c.field)
			}
			if fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) {
				t.Fatalf("got %q, want field %s with %q", err, c.field, c.msg)
			}
			if _, err := c.w.Next(time.Now()); !errors.As(err, &fe) {
				t.Fatalf("Next accepted an invalid window: %v", err)
			}
		})
	}
}

func TestWindowParseHHMM(t *testing.T) {
	good := map[string]int{"00:00": 0, "09:05": 545, "23:59": 1439, "12:30": 750}
	for s, want := range good {
		if got, err := ParseHHMM(s); err != nil || got != want {
			t.Errorf("ParseHHMM(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "9:05", "09:5", "24:00", "23:60", "0900", "09-00", "09:00 ", " 09:00", "+9:00", "٠٩:٠٠", "09:00:00"} {
		if _, err := ParseHHMM(s); err == nil {
			t.Errorf("ParseHHMM(%q) accepted", s)
		}
	}
}

// The window is stored as JSON with each call; nil and empty allowedDays must
// stay distinct through the round trip (nil = every day, empty = invalid).
func TestWindowJSONRoundTrip(t *testing.T) {
	for _, w := range []Window{
		{},
		{TZ: "Asia/Kolkata", LocalScheduleTime: "10:00", RespectBusinessHours: true, BusinessHoursStart: "09:30", BusinessHoursEnd: "18:00", ExcludeWeekends: true, AllowedDays: []int{1, 3}, DoNotCallBefore: "08:00", DoNotCallAfter: "2026-12-01T00:00:00Z"},
		{AllowedDays: []int{}},
	} {
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var back Window
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(w, back) {
			t.Fatalf("round trip of %s: got %+v want %+v", b, back, w)
		}
	}
	b, _ := json.Marshal(Window{TZ: "UTC", RespectBusinessHours: true})
	if want := `{"timezone":"UTC","respectBusinessHours":true,"allowedDays":null}`; string(b) != want {
		t.Fatalf("JSON %s, want %s", b, want)
	}
}

func TestWindowWallToInstantMatchesTimeDate(t *testing.T) {
	loc, _ := LoadZone("America/New_York")
	for _, s := range []string{"2026-01-15T12:00:00", "2026-07-04T23:59:59", "2026-03-08T01:59:59", "2026-03-08T03:00:00", "2026-11-01T02:00:00", "2026-11-01T00:59:59"} {
		p, _ := time.Parse("2006-01-02T15:04:05", s)
		want := time.Date(p.Year(), p.Month(), p.Day(), p.Hour(), p.Minute(), p.Second(), 0, loc)
		if got := wallToInstant(loc, p.Unix()); !got.Equal(want) {
			t.Errorf("%s: got %v want %v", s, got.In(loc), want)
		}
	}
}
