package calls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/internal/clean"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Shared input rules of the call endpoints: cleaning, field checks, agent
// checks and the stored metadata.

// Priority and batch limits (DECISIONS.md: the default is 5 everywhere, 0 runs first).
const (
	DefaultPriority = 5
	MaxPriority     = 10
	MaxBatch        = 1000
	// pastShift: a scheduledAt in the past is moved to now + 5 s.
	pastShift = 5 * time.Second
)

// msgE164 explains the phone format in every phone error.
const msgE164 = "must be an E.164 phone number such as +14155550100"

const timeLayout = apitime.Layout

// formatTime is the API timestamp format (apitime.Format).
func formatTime(t time.Time) string { return apitime.Format(t) }

// Caller is who asks: an organization, or the internal service key, which
// has none and acts in the organization of the agent it names.
type Caller struct {
	OrgID    string
	Internal bool
	// CanOverride: an owner or admin key, which may place an immediate
	// call outside calling hours (ignoreCallingHours).
	CanOverride bool
}

// invalid is bad input in field; msg is the whole client message.
func invalid(field, msg string) *errs.Error {
	return &errs.Error{Kind: errs.Invalid, Field: field, Message: msg}
}

// cleanValue cleans every string of a decoded JSON value (keys included).
func cleanValue(v any) any {
	switch x := v.(type) {
	case string:
		return clean.String(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[clean.String(k)] = cleanValue(e)
		}
		return out
	case []any:
		for i := range x {
			x[i] = cleanValue(x[i])
		}
		return x
	}
	return v
}

// cleanOpt cleans an optional string field.
func cleanOpt(s *string) string {
	if s == nil {
		return ""
	}
	return clean.String(*s)
}

// checkAgentID validates a required agentId.
func checkAgentID(s *string) (string, error) {
	id := cleanOpt(s)
	if id == "" {
		return "", invalid("agentId", "agentId is required")
	}
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return "", invalid("agentId", "agentId must be a valid UUID")
	}
	return strings.ToLower(id), nil
}

// checkPhone validates a required phone field after cleaning.
func checkPhone(field string, s *string) (string, error) {
	if s == nil || clean.String(*s) == "" {
		return "", invalid(field, field+" is required")
	}
	p := clean.Phone(*s)
	if !clean.IsE164(p) {
		return "", invalid(field, field+" "+msgE164)
	}
	return p, nil
}

// checkOptPhone validates an optional phone field (callerId).
func checkOptPhone(field string, s *string) (string, error) {
	if s == nil || clean.String(*s) == "" {
		return "", nil
	}
	return checkPhone(field, s)
}

// checkEmail validates an optional email address.
func checkEmail(field string, s *string) (string, error) {
	e := cleanOpt(s)
	if e == "" {
		return "", nil
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || len(e) > 320 {
		return "", invalid(field, field+" must be an email address such as ada@example.com")
	}
	return e, nil
}

// checkName validates an optional free-text name.
func checkName(field string, s *string) (string, error) {
	n := cleanOpt(s)
	if len(n) > 500 {
		return "", invalid(field, field+" is too long (max 500 characters)")
	}
	return n, nil
}

// checkPriority validates an optional priority, def when unset.
func checkPriority(field string, p *int, def int) (int, error) {
	if p == nil {
		return def, nil
	}
	if *p < 0 || *p > MaxPriority {
		return 0, invalid(field, fmt.Sprintf("%s must be an integer from 0 (highest) to %d (lowest)", field, MaxPriority))
	}
	return *p, nil
}

// parseTime parses an ISO 8601 date-time with offset (RFC 3339, seconds
// optional). A time without an offset is refused: it would be ambiguous.
func parseTime(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), true
	}
	if t, err := time.Parse("2006-01-02T15:04Z07:00", s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// checkTime validates an optional ISO 8601 time field.
func checkTime(field string, s *string) (*time.Time, error) {
	v := cleanOpt(s)
	if v == "" {
		return nil, nil
	}
	t, ok := parseTime(v)
	if !ok {
		return nil, invalid(field, field+" must be an ISO 8601 date-time with offset, e.g. 2026-06-10T14:00:00Z")
	}
	return &t, nil
}

// metaKinds lists the typed keys of callMetadata (API.md) and the JSON kind
// each must have.
var metaKinds = map[string]string{
	"firstName": "string", "lastName": "string", "company": "string", "jobTitle": "string",
	"timezone": "string", "preferredLanguage": "string", "preferredCallTime": "string",
	"doNotCallBefore": "string", "doNotCallAfter": "string", "accountId": "string", "accountType": "string",
	"customerSince": "string", "lastInteraction": "string", "purchaseHistory": "array",
	"callPurpose": "string", "campaignId": "string", "scriptId": "string", "expectedDuration": "number",
	"customFields": "object", "tags": "strings", "notes": "string",
}

var metaKindNames = map[string]string{"string": "a string", "number": "a number", "array": "an array",
	"object": "an object", "strings": "an array of strings"}

// checkMetadata checks the known keys of callMetadata (already cleaned):
// their JSON kinds, the IANA timezone and the doNotCall bounds. Other keys
// are kept as sent.
func checkMetadata(prefix string, m map[string]any) error {
	for k, kind := range metaKinds {
		v, ok := m[k]
		if !ok || v == nil {
			continue
		}
		okKind := false
		switch kind {
		case "string":
			_, okKind = v.(string)
		case "number":
			_, okKind = v.(float64)
		case "array":
			_, okKind = v.([]any)
		case "object":
			_, okKind = v.(map[string]any)
		case "strings":
			if arr, isArr := v.([]any); isArr {
				okKind = true
				for _, e := range arr {
					if _, s := e.(string); !s {
						okKind = false
					}
				}
			}
		}
		if !okKind {
			path := prefix + "." + k
			return invalid(path, fmt.Sprintf("%s must be %s", path, metaKindNames[kind]))
		}
	}
	if tz, _ := m["timezone"].(string); tz != "" {
		if _, err := dial.LoadZone(tz); err != nil {
			return invalid(prefix+".timezone", prefix+".timezone must be an IANA time zone such as Europe/Berlin")
		}
	}
	if lang, _ := m["preferredLanguage"].(string); lang != "" && !isLangCode(lang) {
		return invalid(prefix+".preferredLanguage", prefix+".preferredLanguage must be an ISO 639-1 code such as en")
	}
	before, _ := m["doNotCallBefore"].(string)
	after, _ := m["doNotCallAfter"].(string)
	tz, _ := m["timezone"].(string)
	if err := (dial.Window{TZ: tz, DoNotCallBefore: before, DoNotCallAfter: after}).Validate(); err != nil {
		var fe *dial.FieldError
		if errors.As(err, &fe) {
			return invalid(prefix+"."+fe.Field, prefix+"."+fe.Field+": "+fe.Msg)
		}
		return invalid(prefix, prefix+": "+err.Error())
	}
	return nil
}

// isLangCode accepts a two-letter ISO 639-1 code (any case), optionally
// with a region (en-US), as no-code tools send.
func isLangCode(s string) bool {
	base, _, _ := strings.Cut(s, "-")
	if len(base) != 2 {
		return false
	}
	for _, r := range base {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') {
			return false
		}
	}
	return true
}

// retryError turns a dial retry validation error into bad input naming the
// field (prefix is where the retry settings sit in the body).
func retryError(prefix string, err error) error {
	var fe *dial.FieldError
	if errors.As(err, &fe) {
		return invalid(prefix+fe.Field, prefix+fe.Field+": "+fe.Msg)
	}
	return invalid(strings.TrimSuffix(prefix, "."), prefix+err.Error())
}

// errField is the field of a dial.FieldError, "" otherwise.
func errField(err error) string {
	var fe *dial.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// policyJSON stores a retry policy; no retries stores nothing (no retry).
func policyJSON(p dial.RetryPolicy) json.RawMessage {
	if p.MaxRetries == 0 {
		return nil
	}
	b, _ := json.Marshal(p)
	return b
}

// windowJSON stores a call window; the zero window stores nothing.
func windowJSON(w dial.Window) json.RawMessage {
	if w.TZ == "" && w.LocalScheduleTime == "" && !w.RespectBusinessHours && !w.ExcludeWeekends &&
		w.AllowedDays == nil && w.DoNotCallBefore == "" && w.DoNotCallAfter == "" && !w.IgnoreCallingHours {
		return nil
	}
	b, _ := json.Marshal(w)
	return b
}

// metadataJSON marshals callMetadata, nil when absent.
func metadataJSON(m map[string]any) json.RawMessage {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	return b
}

// recordMetadata is the stored metadata: the caller's keys plus caller_id,
// from_phone_number (both the caller ID used) and priority, which win over
// caller keys of the same name.
func recordMetadata(caller map[string]any, callerID string, priority int) json.RawMessage {
	m := make(map[string]any, len(caller)+3)
	for k, v := range caller {
		m[k] = v
	}
	m["caller_id"] = callerID
	m["from_phone_number"] = callerID
	m["priority"] = priority
	b, _ := json.Marshal(m)
	return b
}

// agent loads the agent a call is for. The internal service key has no
// organization: it is taken from the agent.
func (s *Service) agent(ctx context.Context, c Caller, id string) (agentstore.Agent, error) {
	var a agentstore.Agent
	var err error
	if c.Internal {
		a, err = s.db.Agents.GetAgentAnyOrg(ctx, id)
	} else {
		a, err = s.db.Agents.GetAgent(ctx, c.OrgID, id)
	}
	if errors.Is(err, sqldb.ErrNotFound) {
		return a, &errs.Error{Kind: errs.NotFound, Field: "agentId", Message: "agent not found or access denied", Err: err}
	}
	return a, err
}

// checkSchedulable applies the schedule and batch rules: a voice agent
// with a phone number assigned, not deleted (inactive).
func checkSchedulable(a agentstore.Agent) error {
	if a.Type != "voice" {
		return invalid("agentId", "agent is not a voice agent (type "+a.Type+")")
	}
	if a.Status == "inactive" {
		return invalid("agentId", "agent is not active")
	}
	if len(a.PhoneNumbers) == 0 {
		return invalid("agentId", "agent has no phone number assigned")
	}
	return nil
}
