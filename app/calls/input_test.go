package calls

import (
	"encoding/json"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/errs"
)

// checkInvalid fails unless err is invalid input of field with msg.
func checkInvalid(t *testing.T, name string, err error, field, msg string) {
	t.Helper()
	var e *errs.Error
	if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != field || e.Message != msg {
		t.Errorf("%s: got %#v, want invalid %q: %q", name, err, field, msg)
	}
}

func strp(s string) *string { return &s }

// Every refusal names its field; the messages are the ones the API sends.
func TestScheduleValidationFields(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	agent := strp("6f1d2c1e-0000-4000-8000-000000000000")
	phone := strp("+14155550100")
	cases := []struct {
		name       string
		req        ScheduleRequest
		field, msg string
	}{
		{"no agent", ScheduleRequest{ContactPhone: phone}, "agentId", "agentId is required"},
		{"bad agent", ScheduleRequest{AgentID: strp("x"), ContactPhone: phone}, "agentId", "agentId must be a valid UUID"},
		{"no phone", ScheduleRequest{AgentID: agent}, "contactPhone", "contactPhone is required"},
		{"bad phone", ScheduleRequest{AgentID: agent, ContactPhone: strp("0415")}, "contactPhone", "contactPhone " + msgE164},
		{"bad email", ScheduleRequest{AgentID: agent, ContactPhone: phone, ContactEmail: strp("nope")}, "contactEmail", "contactEmail must be an email address such as ada@example.com"},
		{"bad time", ScheduleRequest{AgentID: agent, ContactPhone: phone, ScheduledAt: strp("tomorrow")}, "scheduledAt", "scheduledAt must be an ISO 8601 date-time with offset, e.g. 2026-06-10T14:00:00Z"},
		{"bad retry unit", ScheduleRequest{AgentID: agent, ContactPhone: phone, RetryIntervals: []dial.RetryInterval{{Value: 5, Unit: "weeks"}}}, "retryIntervals[0].unit", "retryIntervals[0].unit: must be minutes, hours or days"},
		{"metadata tags", ScheduleRequest{AgentID: agent, ContactPhone: phone, CallMetadata: map[string]any{"tags": "vip"}}, "callMetadata.tags", "callMetadata.tags must be an array of strings"},
		{"metadata zone", ScheduleRequest{AgentID: agent, ContactPhone: phone, CallMetadata: map[string]any{"timezone": "Nowhere/City"}}, "callMetadata.timezone", "callMetadata.timezone must be an IANA time zone such as Europe/Berlin"},
	}
	for _, c := range cases {
		_, err := validateSchedule(c.req, now)
		checkInvalid(t, c.name, err, c.field, c.msg)
	}
	sc, err := validateSchedule(ScheduleRequest{AgentID: strp(" 6F1D2C1E-0000-4000-8000-000000000000\u200b"),
		ContactPhone: strp("+1 (415) 555-0100"), ScheduledAt: strp("2020-01-01T00:00:00Z")}, now)
	if err != nil || sc.agentID != *agent || sc.phone != *phone || !sc.at.Equal(now.Add(pastShift)) || sc.priority != DefaultPriority {
		t.Errorf("cleaned request: %+v %v", sc, err)
	}
}

func TestBatchValidationFields(t *testing.T) {
	agent := strp("6f1d2c1e-0000-4000-8000-000000000000")
	one := []json.RawMessage{json.RawMessage(`{"contactPhone":"+14155550100"}`)}
	cases := []struct {
		name       string
		req        BatchRequest
		field, msg string
	}{
		{"no calls", BatchRequest{AgentID: agent}, "calls", "calls is required: an array of 1 to 1000 calls"},
		{"empty", BatchRequest{AgentID: agent, Calls: []json.RawMessage{}}, "calls", "calls must not be empty (1 to 1000 calls)"},
		{"priority", BatchRequest{AgentID: agent, Calls: one, DefaultPriority: new(int(11))}, "defaultPriority", "defaultPriority must be an integer from 0 (highest) to 10 (lowest)"},
		{"retry both", BatchRequest{AgentID: agent, Calls: one, RetrySchedule: []string{"2030-01-01T00:00:00Z"},
			RetryConfig: &dial.RetryConfig{RetrySchedule: []string{"2030-01-01T00:00:00Z"}}}, "retrySchedule", "retrySchedule: give it at the top level or in retryConfig, not both"},
		{"retry max", BatchRequest{AgentID: agent, Calls: one, RetryConfig: &dial.RetryConfig{MaxRetries: new(int(99))}}, "retryConfig.maxRetries", "retryConfig.maxRetries: at most 20 retries (and maxRetries not negative)"},
	}
	for _, c := range cases {
		_, err := validateBatch(c.req)
		checkInvalid(t, c.name, err, c.field, c.msg)
	}
}

func TestListQueryFields(t *testing.T) {
	for q, want := range map[string][2]string{
		"limit=0":            {"limit", "limit must be from 1 to 100"},
		"offset=x":           {"offset", "offset must be an integer"},
		"from=yesterday":     {"from", "from must be an ISO 8601 date-time with offset, e.g. 2026-06-10T14:00:00Z"},
		"sortBy=name":        {"sortBy", "sortBy must be createdAt, scheduledAt or priority"},
		"status=done":        {"status", `status "done" is not a call status (initiated, queued, scheduled, connecting, ringing, active, completed, failed, cancelled, no_answer, busy)`},
		"phoneNumber=12":     {"phoneNumber", "phoneNumber " + msgE164},
		"direction=sideways": {"direction", "direction must be inbound, outbound or web"},
	} {
		v, _ := url.ParseQuery(q)
		o, err := ParseListQuery(v)
		if err == nil {
			err = o.Validate()
		}
		checkInvalid(t, q, err, want[0], want[1])
	}
	v, _ := url.ParseQuery("status=queued,%20active&status=busy&sortOrder=ASC&phoneNumber=%2B1%20415%20555%200100")
	o, err := ParseListQuery(v)
	if err == nil {
		err = o.Validate()
	}
	if err != nil || len(o.Statuses) != 3 || o.SortOrder != "asc" || o.Limit != 50 || o.PhoneNumber != "+14155550100" {
		t.Errorf("options %+v %v", o, err)
	}
}

func TestResultValidationFields(t *testing.T) {
	role, at := strp("agent"), strp("2026-06-10T14:00:00Z")
	cases := []struct {
		name       string
		req        ResultRequest
		field, msg string
	}{
		{"nothing", ResultRequest{}, "", "nothing to record: give summary, transcript, outcome, metadata or optOut"},
		{"empty summary", ResultRequest{Summary: strp("\u200b ")}, "summary", "summary must not be empty (leave it out to keep the stored one)"},
		{"outcome", ResultRequest{Outcome: strp("Booked!")}, "outcome", "outcome must be a label of 1 to 64 characters a-z, 0-9, _ or -, e.g. appointment_booked"},
		{"role", ResultRequest{Transcript: &[]TranscriptInput{{Role: strp("bot"), Text: strp(""), At: at}}}, "transcript[0].role", "transcript[0].role must be agent, user, system or tool"},
		{"text", ResultRequest{Transcript: &[]TranscriptInput{{Role: role, Text: strp("a"), At: at}, {Role: role, At: at}}}, "transcript[1].text", "transcript[1].text is required"},
		{"at", ResultRequest{Transcript: &[]TranscriptInput{{Role: role, Text: strp(""), At: strp("noon")}}}, "transcript[0].at", "transcript[0].at must be an RFC 3339 date-time, e.g. 2026-06-10T14:00:05Z"},
	}
	for _, c := range cases {
		_, err := parseResult(c.req, "id")
		checkInvalid(t, c.name, err, c.field, c.msg)
	}
}
