package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/storage"
)

// Shared input rules of the call endpoints: cleaning, field checks, agent
// checks and the stored metadata.

// Priority rules (DECISIONS.md: the default is 5 everywhere, 0 runs first).
const (
	callDefaultPriority = 5
	callMaxPriority     = 10
	callMaxBatch        = 1000
	// callPastShift: a scheduledAt in the past is moved to now + 5 s.
	callPastShift = 5 * time.Second
)

// callMsgE164 explains the phone format in every phone error.
const callMsgE164 = "must be an E.164 phone number such as +14155550100"

// cleanCallValue cleans every string of a decoded JSON value (keys included).
func cleanCallValue(v any) any {
	switch x := v.(type) {
	case string:
		return cleanString(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[cleanString(k)] = cleanCallValue(e)
		}
		return out
	case []any:
		for i := range x {
			x[i] = cleanCallValue(x[i])
		}
		return x
	}
	return v
}

// cleanCallOpt cleans an optional string field.
func cleanCallOpt(s *string) string {
	if s == nil {
		return ""
	}
	return cleanString(*s)
}

// checkCallAgentID validates a required agentId.
func checkCallAgentID(s *string) (string, error) {
	id := cleanCallOpt(s)
	if id == "" {
		return "", badRequest("agentId is required")
	}
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return "", badRequest("agentId must be a valid UUID")
	}
	return strings.ToLower(id), nil
}

// checkCallPhone validates a required phone field after cleaning.
func checkCallPhone(field string, s *string) (string, error) {
	if s == nil || cleanString(*s) == "" {
		return "", badRequest(field + " is required")
	}
	p := cleanPhone(*s)
	if !validE164(p) {
		return "", badRequest(field + " " + callMsgE164)
	}
	return p, nil
}

// checkCallOptPhone validates an optional phone field (callerId).
func checkCallOptPhone(field string, s *string) (string, error) {
	if s == nil || cleanString(*s) == "" {
		return "", nil
	}
	return checkCallPhone(field, s)
}

// checkCallEmail validates an optional email address.
func checkCallEmail(field string, s *string) (string, error) {
	e := cleanCallOpt(s)
	if e == "" {
		return "", nil
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || len(e) > 320 {
		return "", badRequest(field + " must be an email address such as ada@example.com")
	}
	return e, nil
}

// checkCallName validates an optional free-text name.
func checkCallName(field string, s *string) (string, error) {
	n := cleanCallOpt(s)
	if len(n) > 500 {
		return "", badRequest(field + " is too long (max 500 characters)")
	}
	return n, nil
}

// checkCallPriority validates an optional priority, def when unset.
func checkCallPriority(field string, p *int, def int) (int, error) {
	if p == nil {
		return def, nil
	}
	if *p < 0 || *p > callMaxPriority {
		return 0, badRequest(fmt.Sprintf("%s must be an integer from 0 (highest) to %d (lowest)", field, callMaxPriority))
	}
	return *p, nil
}

// parseCallTime parses an ISO 8601 date-time with offset (RFC 3339, seconds
// optional). A time without an offset is refused: it would be ambiguous.
func parseCallTime(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), true
	}
	if t, err := time.Parse("2006-01-02T15:04Z07:00", s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// checkCallTime validates an optional ISO 8601 time field.
func checkCallTime(field string, s *string) (*time.Time, error) {
	v := cleanCallOpt(s)
	if v == "" {
		return nil, nil
	}
	t, ok := parseCallTime(v)
	if !ok {
		return nil, badRequest(field + " must be an ISO 8601 date-time with offset, e.g. 2026-06-10T14:00:00Z")
	}
	return &t, nil
}

// callMetaKinds lists the typed keys of callMetadata (API.md) and the JSON kind
// each must have.
var callMetaKinds = map[string]string{
	"firstName": "string", "lastName": "string", "company": "string", "jobTitle": "string",
	"timezone": "string", "preferredLanguage": "string", "preferredCallTime": "string",
	"doNotCallBefore": "string", "doNotCallAfter": "string", "accountId": "string", "accountType": "string",
	"customerSince": "string", "lastInteraction": "string", "purchaseHistory": "array",
	"callPurpose": "string", "campaignId": "string", "scriptId": "string", "expectedDuration": "number",
	"customFields": "object", "tags": "strings", "notes": "string",
}

// checkCallMetadata checks the known keys of callMetadata (already cleaned):
// their JSON kinds, the IANA timezone and the doNotCall bounds. Other keys
// are kept as sent.
func checkCallMetadata(prefix string, m map[string]any) error {
	for k, kind := range callMetaKinds {
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
			want := map[string]string{"string": "a string", "number": "a number", "array": "an array",
				"object": "an object", "strings": "an array of strings"}[kind]
			return badRequest(fmt.Sprintf("%s.%s must be %s", prefix, k, want))
		}
	}
	if tz, _ := m["timezone"].(string); tz != "" {
		if _, err := dial.LoadZone(tz); err != nil {
			return badRequest(fmt.Sprintf("%s.timezone must be an IANA time zone such as Europe/Berlin", prefix))
		}
	}
	if lang, _ := m["preferredLanguage"].(string); lang != "" && !isCallLangCode(lang) {
		return badRequest(prefix + ".preferredLanguage must be an ISO 639-1 code such as en")
	}
	before, _ := m["doNotCallBefore"].(string)
	after, _ := m["doNotCallAfter"].(string)
	tz, _ := m["timezone"].(string)
	if err := (dial.Window{TZ: tz, DoNotCallBefore: before, DoNotCallAfter: after}).Validate(); err != nil {
		var fe *dial.FieldError
		if errors.As(err, &fe) {
			return badRequest(prefix + "." + fe.Field + ": " + fe.Msg)
		}
		return badRequest(prefix + ": " + err.Error())
	}
	return nil
}

// isCallLangCode accepts a two-letter ISO 639-1 code (any case), optionally
// with a region (en-US), as no-code tools send.
func isCallLangCode(s string) bool {
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

// callRetryError turns a dial retry validation error into a 400 naming the field.
func callRetryError(prefix string, err error) error {
	var fe *dial.FieldError
	if errors.As(err, &fe) {
		return badRequest(prefix + fe.Field + ": " + fe.Msg)
	}
	return badRequest(prefix + err.Error())
}

// callPolicyJSON stores a retry policy; no retries stores nothing (no retry).
func callPolicyJSON(p dial.RetryPolicy) json.RawMessage {
	if p.MaxRetries == 0 {
		return nil
	}
	b, _ := json.Marshal(p)
	return b
}

// callWindowJSON stores a call window; the zero window stores nothing.
func callWindowJSON(w dial.Window) json.RawMessage {
	if w.TZ == "" && w.LocalScheduleTime == "" && !w.RespectBusinessHours && !w.ExcludeWeekends &&
		w.AllowedDays == nil && w.DoNotCallBefore == "" && w.DoNotCallAfter == "" {
		return nil
	}
	b, _ := json.Marshal(w)
	return b
}

// callMetadataJSON marshals callMetadata, nil when absent.
func callMetadataJSON(m map[string]any) json.RawMessage {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	return b
}

// callRecordMetadata is the stored metadata: the caller's keys plus caller_id,
// from_phone_number (both the caller ID used) and priority, which win over
// caller keys of the same name.
func callRecordMetadata(caller map[string]any, callerID string, priority int) json.RawMessage {
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

// callAgent loads the agent a call is for. The internal service key has no
// organization: it is taken from the agent.
func (s *Server) callAgent(ctx context.Context, r *http.Request, id string) (storage.Agent, error) {
	var a storage.Agent
	var err error
	if p := principalFrom(ctx); p.Internal {
		a, err = s.db.GetAgentAnyOrg(ctx, id)
	} else {
		a, err = s.db.GetAgent(ctx, orgID(r), id)
	}
	if isNotFound(err) {
		return a, &Error{Kind: errs.NotFound, Message: "agent not found or access denied", Err: err}
	}
	return a, err
}

// checkSchedulableAgent applies the schedule and batch rules: a voice agent
// with a phone number assigned, not deleted (inactive). It returns the
// caller ID to use.
func checkSchedulableAgent(a storage.Agent, callerID string) (string, error) {
	if a.Type != "voice" {
		return "", badRequest("agent is not a voice agent (type " + a.Type + ")")
	}
	if a.Status == "inactive" {
		return "", badRequest("agent is not active")
	}
	if len(a.PhoneNumbers) == 0 {
		return "", badRequest("agent has no phone number assigned")
	}
	if callerID == "" {
		callerID = a.PhoneNumbers[0]
	}
	return callerID, nil
}
