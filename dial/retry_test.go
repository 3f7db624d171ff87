package dial

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func intp(v int) *int    { return &v }
func boolp(v bool) *bool { return &v }

func TestRetryConfigPolicy(t *testing.T) {
	cases := []struct {
		name    string
		cfg     RetryConfig
		want    RetryPolicy
		errPath string
		errMsg  string
	}{
		{name: "no retry config, no retry", cfg: RetryConfig{},
			want: RetryPolicy{RetryOnVoicemail: true, MaxRetries: 0, RetryOnNoAnswer: true, RetryOnBusy: true}},
		{name: "flags alone do not enable retries", cfg: RetryConfig{RetryOnFailed: boolp(true)},
			want: RetryPolicy{RetryOnVoicemail: true, MaxRetries: 0, RetryOnNoAnswer: true, RetryOnBusy: true, RetryOnFailed: true}},
		{name: "maxRetries derived from intervals; units normalised", cfg: RetryConfig{RetryIntervals: []RetryInterval{{30, "minutes"}, {2, "Hours"}, {1, " day"}}},
			want: RetryPolicy{RetryOnVoicemail: true, MaxRetries: 3, RetryOnNoAnswer: true, RetryOnBusy: true, RetryIntervals: []RetryInterval{{30, "minutes"}, {2, "hours"}, {1, "days"}}}},
		{name: "maxRetries derived from schedule; schedule sorted, UTC", cfg: RetryConfig{RetrySchedule: []string{"2026-06-11T10:00:00+02:00", "2026-06-10T15:00Z"}},
			want: RetryPolicy{RetryOnVoicemail: true, MaxRetries: 2, RetryOnNoAnswer: true, RetryOnBusy: true, RetrySchedule: []time.Time{
				time.Date(2026, 6, 10, 15, 0, 0, 0, time.UTC), time.Date(2026, 6, 11, 8, 0, 0, 0, time.UTC)}}},
		{name: "explicit maxRetries beats the interval count; flags off", cfg: RetryConfig{MaxRetries: intp(5), RetryOnNoAnswer: boolp(false), RetryOnBusy: boolp(false), RetryIntervals: []RetryInterval{{1, "hours"}}},
			want: RetryPolicy{RetryOnVoicemail: true, MaxRetries: 5, RetryIntervals: []RetryInterval{{1, "hours"}}}},
		{name: "maxRetries 0 disables retries despite intervals", cfg: RetryConfig{MaxRetries: intp(0), RetryIntervals: []RetryInterval{{1, "hours"}}},
			want: RetryPolicy{RetryOnVoicemail: true, MaxRetries: 0, RetryOnNoAnswer: true, RetryOnBusy: true, RetryIntervals: []RetryInterval{{1, "hours"}}}},
		{name: "voicemail retries can be turned off", cfg: RetryConfig{RetryOnVoicemail: boolp(false), RetryIntervals: []RetryInterval{{1, "hours"}}},
			want: RetryPolicy{MaxRetries: 1, RetryOnNoAnswer: true, RetryOnBusy: true, RetryIntervals: []RetryInterval{{1, "hours"}}}},
		{name: "both intervals and schedule", cfg: RetryConfig{RetryIntervals: []RetryInterval{{1, "hours"}}, RetrySchedule: []string{"2026-06-10T15:00:00Z"}},
			errPath: "retrySchedule", errMsg: "not both"},
		{name: "bad unit", cfg: RetryConfig{RetryIntervals: []RetryInterval{{1, "hours"}, {1, "weeks"}}}, errPath: "retryIntervals[1].unit", errMsg: "minutes, hours or days"},
		{name: "zero value", cfg: RetryConfig{RetryIntervals: []RetryInterval{{0, "hours"}}}, errPath: "retryIntervals[0].value", errMsg: "more than 0"},
		{name: "negative value", cfg: RetryConfig{RetryIntervals: []RetryInterval{{-1, "minutes"}}}, errPath: "retryIntervals[0].value", errMsg: "more than 0"},
		{name: "over a year", cfg: RetryConfig{RetryIntervals: []RetryInterval{{366, "days"}}}, errPath: "retryIntervals[0].value", errMsg: "365 days"},
		{name: "schedule without offset", cfg: RetryConfig{RetrySchedule: []string{"2026-06-10T15:00:00"}}, errPath: "retrySchedule[0]", errMsg: "ISO 8601"},
		{name: "schedule garbage", cfg: RetryConfig{RetrySchedule: []string{"2026-06-10T15:00:00Z", "tomorrow"}}, errPath: "retrySchedule[1]", errMsg: "ISO 8601"},
		{name: "negative maxRetries", cfg: RetryConfig{MaxRetries: intp(-1)}, errPath: "maxRetries", errMsg: "at most 20"},
		{name: "too many retries", cfg: RetryConfig{MaxRetries: intp(21)}, errPath: "maxRetries", errMsg: "at most 20"},
		{name: "too many intervals", cfg: RetryConfig{RetryIntervals: make21()}, errPath: "retryIntervals", errMsg: "at most 20"},
		{name: "maxRetries beyond schedule", cfg: RetryConfig{MaxRetries: intp(3), RetrySchedule: []string{"2026-06-10T15:00:00Z"}}, errPath: "maxRetries", errMsg: "more than the 1 times"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.cfg.Policy()
			if c.errPath != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != c.errPath || !strings.Contains(fe.Msg, c.errMsg) {
					t.Fatalf("got %v, want error on %s with %q", err, c.errPath, c.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
			// The policy is stored as JSON with the call.
			b, _ := json.Marshal(got)
			var back RetryPolicy
			if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, got) {
				t.Fatalf("JSON round trip %s: %+v, %v", b, back, err)
			}
		})
	}
}

func make21() []RetryInterval {
	out := make([]RetryInterval, 21)
	for i := range out {
		out[i] = RetryInterval{1, "minutes"}
	}
	return out
}

func TestRetryShouldRetry(t *testing.T) {
	p := RetryPolicy{MaxRetries: 2, RetryOnNoAnswer: true, RetryOnBusy: false, RetryOnFailed: true}
	cases := []struct {
		attempts int
		status   string
		want     bool
	}{
		{1, StatusNoAnswer, true},  // first attempt, 2 retries left
		{2, StatusNoAnswer, true},  // first retry ended, 1 left
		{3, StatusNoAnswer, false}, // both retries spent
		{1, StatusBusy, false},     // busy not retried by this policy
		{1, StatusFailed, true},
		{1, StatusCompleted, false},
		{1, StatusCancelled, false},
		{0, StatusNoAnswer, false}, // nonsense attempt count
	}
	for _, c := range cases {
		if got := p.ShouldRetry(c.attempts, c.status); got != c.want {
			t.Errorf("ShouldRetry(%d, %s) = %v, want %v", c.attempts, c.status, got, c.want)
		}
	}
	none, _ := RetryConfig{}.Policy()
	if none.ShouldRetry(1, StatusNoAnswer) || none.ShouldRetry(1, StatusBusy) {
		t.Fatal("no retry config must mean no retry")
	}
	def, _ := RetryConfig{MaxRetries: intp(1)}.Policy()
	if !def.ShouldRetry(1, StatusBusy) || !def.ShouldRetry(1, StatusNoAnswer) || def.ShouldRetry(1, StatusFailed) {
		t.Fatal("defaults: retry on no answer and busy, not on failed")
	}
}

func TestRetryNextAttempt(t *testing.T) {
	intervals, _ := RetryConfig{MaxRetries: intp(4), RetryIntervals: []RetryInterval{{30, "minutes"}, {2, "hours"}, {1, "days"}}}.Policy()
	sched, _ := RetryConfig{RetrySchedule: []string{"2026-06-12T15:00:00Z", "2026-06-10T13:00:00Z"}}.Policy()
	plain, _ := RetryConfig{MaxRetries: intp(1)}.Policy()
	frac, _ := RetryConfig{RetryIntervals: []RetryInterval{{1.5, "hours"}}}.Policy()
	nyBiz := Window{TZ: "America/New_York", RespectBusinessHours: true, ExcludeWeekends: true}
	cases := []struct {
		name     string
		p        RetryPolicy
		attempts int
		ended    string
		w        Window
		want     string
		err      error
	}{
		{"retry 1 waits the first interval (30 min) from the end", intervals, 1, "2026-06-10T12:00:10Z", Window{}, "2026-06-10T12:30:10Z", nil},
		{"retry 2 waits the second (2 h)", intervals, 2, "2026-06-10T12:00:00Z", Window{}, "2026-06-10T14:00:00Z", nil},
		{"retry 3 waits the third (1 day = 24 h)", intervals, 3, "2026-06-10T12:00:00Z", Window{}, "2026-06-11T12:00:00Z", nil},
		{"retry 4: fewer intervals than retries, the last repeats", intervals, 4, "2026-06-10T12:00:00Z", Window{}, "2026-06-11T12:00:00Z", nil},
		{"no retry 5", intervals, 5, "2026-06-10T12:00:00Z", Window{}, "", ErrNoRetry},
		{"fractional interval 1.5 hours", frac, 1, "2026-06-10T12:00:00Z", Window{}, "2026-06-10T13:30:00Z", nil},
		{"interval lands at 17:30 NY Friday: pushed to Monday 09:00 EDT", intervals, 1, "2026-06-12T17:00:00-04:00", nyBiz, "2026-06-15T09:00:00-04:00", nil},
		{"1-day interval over NY spring-forward is 24 h: 10:00 EST Sat -> 11:00 EDT Sun", intervals, 3, "2026-03-07T10:00:00-05:00", Window{TZ: "America/New_York"}, "2026-03-08T11:00:00-04:00", nil},
		{"schedule (sorted): retry 1 at 13:00Z", sched, 1, "2026-06-10T12:00:00Z", Window{}, "2026-06-10T13:00:00Z", nil},
		{"schedule: retry 2 at the second time", sched, 2, "2026-06-10T13:05:00Z", Window{}, "2026-06-12T15:00:00Z", nil},
		{"schedule entry already past at the end: as soon as allowed", sched, 1, "2026-06-10T14:00:00Z", Window{}, "2026-06-10T14:00:00Z", nil},
		{"past schedule entry outside the window: next opening", sched, 1, "2026-06-10T22:00:00Z", nyBiz, "2026-06-11T09:00:00-04:00", nil},
		{"schedule exhausted", sched, 3, "2026-06-10T12:00:00Z", Window{}, "", ErrNoRetry},
		{"maxRetries alone uses the 30-minute default", plain, 1, "2026-06-10T12:00:00Z", Window{}, "2026-06-10T12:30:00Z", nil},
		{"no retry config: no next attempt", RetryPolicy{}, 1, "2026-06-10T12:00:00Z", Window{}, "", ErrNoRetry},
		{"window closed for good", intervals, 1, "2026-06-10T12:00:00Z", Window{DoNotCallAfter: "2026-06-10T12:15:00Z"}, "", ErrNoWindow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.p.NextAttempt(c.attempts, ts(t, c.ended), c.w)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("got %v, %v; want %v", got, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := ts(t, c.want); !got.Equal(want) {
				t.Fatalf("got %s, want %s", got.Format(time.RFC3339), c.want)
			}
		})
	}
}

// FuzzRetryConfig: any retry input is either a clear *FieldError or a
// policy whose every retry time is computable and not before the attempt end.
func FuzzRetryConfig(f *testing.F) {
	f.Add(3, true, 30.0, "minutes", "", "")
	f.Add(-1, false, 0.0, "", "2026-06-10T15:00:00Z", "2026-06-09T15:00Z")
	f.Add(25, true, 1e300, "days", "not a time", "")
	f.Add(1, false, 1.5, "Hours", "", "")
	ended := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, maxRetries int, setMax bool, value float64, unit, s1, s2 string) {
		c := RetryConfig{}
		if setMax {
			c.MaxRetries = &maxRetries
		}
		if unit != "" {
			c.RetryIntervals = []RetryInterval{{value, unit}, {value / 2, unit}}
		}
		for _, s := range []string{s1, s2} {
			if s != "" {
				c.RetrySchedule = append(c.RetrySchedule, s)
			}
		}
		p, err := c.Policy()
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("%+v: %v is not a FieldError", c, err)
			}
			return
		}
		for k := 1; k <= p.MaxRetries; k++ {
			at, err := p.NextAttempt(k, ended, Window{})
			if err != nil || at.Before(ended) {
				t.Fatalf("%+v retry %d: %v, %v", p, k, at, err)
			}
		}
		if _, err := p.NextAttempt(p.MaxRetries+1, ended, Window{}); !errors.Is(err, ErrNoRetry) {
			t.Fatalf("%+v: retry past maxRetries gave %v", p, err)
		}
	})
}
