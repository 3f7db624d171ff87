package dial

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// RetryInterval is one entry of retryIntervals: a wait after the end of the
// previous attempt.
type RetryInterval struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"` // minutes, hours or days
}

// RetryConfig is the retry input as a request carries it: the batch's
// retryConfig object, or the schedule endpoint's top-level maxRetries and
// retryIntervals; retrySchedule is top-level in both and is copied in here.
// Pointers tell "unset" from false/0 so defaults can apply.
type RetryConfig struct {
	MaxRetries      *int  `json:"maxRetries,omitempty"`
	RetryOnNoAnswer *bool `json:"retryOnNoAnswer,omitempty"` // default true
	RetryOnBusy     *bool `json:"retryOnBusy,omitempty"`     // default true
	RetryOnFailed   *bool `json:"retryOnFailed,omitempty"`   // default false
	// RetryOnVoicemail retries a call the voice agent reported as answered
	// by voicemail (outcome "voicemail"); default true.
	RetryOnVoicemail *bool           `json:"retryOnVoicemail,omitempty"`
	RetryIntervals   []RetryInterval `json:"retryIntervals,omitempty"`
	RetrySchedule    []string        `json:"retrySchedule,omitempty"` // ISO 8601 date-times
}

// RetryPolicy is a validated RetryConfig with defaults applied. It is what a
// call stores, next to its Window.
type RetryPolicy struct {
	MaxRetries      int  `json:"maxRetries"`
	RetryOnNoAnswer bool `json:"retryOnNoAnswer"`
	RetryOnBusy     bool `json:"retryOnBusy"`
	RetryOnFailed   bool `json:"retryOnFailed"`
	// RetryOnVoicemail is read as true from policies stored before it
	// existed (UnmarshalJSON).
	RetryOnVoicemail bool            `json:"retryOnVoicemail"`
	RetryIntervals   []RetryInterval `json:"retryIntervals,omitempty"`
	RetrySchedule    []time.Time     `json:"retrySchedule,omitempty"` // sorted, UTC
}

// UnmarshalJSON reads a stored policy; a policy stored before
// retryOnVoicemail existed retries on voicemail, the default.
func (p *RetryPolicy) UnmarshalJSON(b []byte) error {
	type plain RetryPolicy
	v := plain{RetryOnVoicemail: true}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = RetryPolicy(v)
	return nil
}

// Retry limits.
const (
	MaxRetriesLimit      = 20                   // most retries one call may have
	MaxRetryWait         = 365 * 24 * time.Hour // longest single retry interval
	DefaultRetryInterval = 30 * time.Minute     // when maxRetries is set without intervals or a schedule
)

// ErrNoRetry is returned by NextAttempt when the policy has no retry left.
var ErrNoRetry = errors.New("no retry left")

var retryUnits = map[string]time.Duration{
	"minute": time.Minute, "minutes": time.Minute,
	"hour": time.Hour, "hours": time.Hour,
	"day": 24 * time.Hour, "days": 24 * time.Hour,
}

// Policy validates c and applies the defaults. No retry configuration at
// all gives MaxRetries 0: no retry. Errors are *FieldError naming the field
// ("retryIntervals[1].unit"); the caller adds its own prefix if any.
func (c RetryConfig) Policy() (RetryPolicy, error) {
	p := RetryPolicy{RetryOnNoAnswer: true, RetryOnBusy: true, RetryOnVoicemail: true}
	if c.RetryOnVoicemail != nil {
		p.RetryOnVoicemail = *c.RetryOnVoicemail
	}
	if c.RetryOnNoAnswer != nil {
		p.RetryOnNoAnswer = *c.RetryOnNoAnswer
	}
	if c.RetryOnBusy != nil {
		p.RetryOnBusy = *c.RetryOnBusy
	}
	if c.RetryOnFailed != nil {
		p.RetryOnFailed = *c.RetryOnFailed
	}
	if len(c.RetryIntervals) > 0 && len(c.RetrySchedule) > 0 {
		return RetryPolicy{}, &FieldError{"retrySchedule", "use retryIntervals or retrySchedule, not both"}
	}
	for i, iv := range c.RetryIntervals {
		unit, ok := retryUnits[strings.ToLower(strings.TrimSpace(iv.Unit))]
		if !ok {
			return RetryPolicy{}, &FieldError{fmt.Sprintf("retryIntervals[%d].unit", i), "must be minutes, hours or days"}
		}
		if !(iv.Value > 0) || iv.Value*float64(unit) > float64(MaxRetryWait) {
			return RetryPolicy{}, &FieldError{fmt.Sprintf("retryIntervals[%d].value", i), "must be more than 0 and at most 365 days"}
		}
		p.RetryIntervals = append(p.RetryIntervals, RetryInterval{Value: iv.Value, Unit: canonicalUnit(unit)})
	}
	for i, s := range c.RetrySchedule {
		t, err := parseDateTime(s)
		if err != nil {
			return RetryPolicy{}, &FieldError{fmt.Sprintf("retrySchedule[%d]", i), "must be an ISO 8601 date-time with offset, e.g. 2026-06-10T14:00:00Z"}
		}
		p.RetrySchedule = append(p.RetrySchedule, t.UTC())
	}
	slices.SortFunc(p.RetrySchedule, func(a, b time.Time) int { return a.Compare(b) })

	switch {
	case c.MaxRetries != nil:
		p.MaxRetries = *c.MaxRetries
	case len(p.RetryIntervals) > 0:
		p.MaxRetries = len(p.RetryIntervals)
	default:
		p.MaxRetries = len(p.RetrySchedule)
	}
	if p.MaxRetries < 0 || p.MaxRetries > MaxRetriesLimit {
		field := "maxRetries"
		if c.MaxRetries == nil {
			field = "retryIntervals"
			if len(p.RetrySchedule) > 0 {
				field = "retrySchedule"
			}
		}
		return RetryPolicy{}, &FieldError{field, fmt.Sprintf("at most %d retries (and maxRetries not negative)", MaxRetriesLimit)}
	}
	if n := len(p.RetrySchedule); n > 0 && p.MaxRetries > n {
		return RetryPolicy{}, &FieldError{"maxRetries", fmt.Sprintf("%d is more than the %d times in retrySchedule", p.MaxRetries, n)}
	}
	return p, nil
}

func canonicalUnit(d time.Duration) string {
	switch d {
	case time.Minute:
		return "minutes"
	case time.Hour:
		return "hours"
	}
	return "days"
}

func parseDateTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02T15:04Z07:00", s) // seconds left out
}

// ShouldRetry reports whether a call whose attempt number attempts (1 for
// the first) just ended with status gets another attempt: a retry is left
// and the policy retries on that outcome (no_answer, busy, failed,
// voicemail).
func (p RetryPolicy) ShouldRetry(attempts int, status string) bool {
	if attempts < 1 || attempts > p.MaxRetries {
		return false
	}
	switch status {
	case StatusNoAnswer:
		return p.RetryOnNoAnswer
	case StatusBusy:
		return p.RetryOnBusy
	case StatusFailed:
		return p.RetryOnFailed
	case OutcomeVoicemail:
		return p.RetryOnVoicemail
	}
	return false
}

// NextAttempt returns when attempt attempts+1 (retry number attempts) is
// due, for an attempt that ended at endedAt, pushed into the call's window.
// Retry k waits RetryIntervals[k-1] (the last one repeats when there are
// fewer intervals than retries) after endedAt, or goes at RetrySchedule[k-1]
// (a time already past at endedAt means as soon as the window allows), or
// DefaultRetryInterval when the policy has neither. Days are 24 hours.
func (p RetryPolicy) NextAttempt(attempts int, endedAt time.Time, w Window) (time.Time, error) {
	if attempts < 1 || attempts > p.MaxRetries {
		return time.Time{}, ErrNoRetry
	}
	at := endedAt.Add(DefaultRetryInterval)
	switch {
	case len(p.RetrySchedule) > 0:
		at = p.RetrySchedule[min(attempts, len(p.RetrySchedule))-1]
		if at.Before(endedAt) {
			at = endedAt
		}
	case len(p.RetryIntervals) > 0:
		iv := p.RetryIntervals[min(attempts, len(p.RetryIntervals))-1]
		at = endedAt.Add(time.Duration(iv.Value * float64(retryUnits[iv.Unit])))
	}
	return w.Next(at)
}
