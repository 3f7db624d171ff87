package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage"
)

// CallRecord is a call as GET /api/v1/calls/{id} (and the list, and the
// CLI) shows it.
type CallRecord struct {
	ID               string          `json:"id"`
	Status           string          `json:"status"`
	Direction        string          `json:"direction"`
	AgentID          string          `json:"agentId"`
	Agent            CallAgent       `json:"agent"`
	PhoneNumber      string          `json:"phoneNumber"`
	CallerID         string          `json:"callerId"`
	Contact          CallContact     `json:"contact"`
	Priority         int             `json:"priority"`
	ScheduledAt      *string         `json:"scheduledAt"`
	NextAttemptAt    *string         `json:"nextAttemptAt"`
	StartedAt        *string         `json:"startedAt"`
	AnsweredAt       *string         `json:"answeredAt"`
	EndedAt          *string         `json:"endedAt"`
	Duration         *float64        `json:"duration"`
	Summary          *string         `json:"summary"`
	FailureReason    *string         `json:"failure_reason"`
	LastOutcome      *string         `json:"lastOutcome"`
	RoomID           *string         `json:"roomId"`
	JobID            *string         `json:"jobId"`
	SIPParticipantID *string         `json:"sipParticipantId"`
	Attempts         int             `json:"attempts"`
	MaxRetries       int             `json:"maxRetries"`
	RetryConfig      json.RawMessage `json:"retryConfig"`
	Metadata         json.RawMessage `json:"metadata"`
	CallMetadata     json.RawMessage `json:"callMetadata"`
	BatchID          *string         `json:"batchId"`
	Dialer           *string         `json:"dialer"`
	AttemptHistory   []CallAttempt   `json:"attemptHistory,omitempty"`
	CreatedAt        string          `json:"createdAt"`
	UpdatedAt        string          `json:"updatedAt"`

	// The voice agent's result (app/telephony_result.go): set by
	// GetCallRecord, nil (so not shown) in lists.
	*CallResultView
}

// CallAgent is the agent of a call record.
type CallAgent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

// CallContact is the callee of a call record.
type CallContact struct {
	Phone string  `json:"phone"`
	Name  *string `json:"name"`
	Email *string `json:"email"`
}

// CallAttempt is one dial attempt in a call record.
type CallAttempt struct {
	Attempt       int      `json:"attempt"`
	Status        string   `json:"status"`
	FailureReason *string  `json:"failureReason"`
	SIPCode       *int     `json:"sipCode"`
	RoomID        *string  `json:"roomId"`
	Duration      *float64 `json:"duration"`
	StartedAt     string   `json:"startedAt"`
	EndedAt       *string  `json:"endedAt"`
}

func callStrPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func callTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := formatTime(*t)
	return &s
}

func callRawOrNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// callRecord shapes a stored call.
func callRecord(c storage.Call) CallRecord {
	rec := CallRecord{
		ID: c.ID, Status: c.Status, Direction: c.Direction, AgentID: c.AgentID,
		Agent:       CallAgent{ID: c.AgentID, Name: c.AgentName, Type: c.AgentType},
		PhoneNumber: c.PhoneNumber, CallerID: c.CallerID,
		Contact:  CallContact{Phone: c.PhoneNumber, Name: callStrPtr(c.ContactName), Email: callStrPtr(c.ContactEmail)},
		Priority: c.Priority, ScheduledAt: callTimePtr(c.ScheduledAt),
		StartedAt: callTimePtr(c.StartedAt), AnsweredAt: callTimePtr(c.AnsweredAt), EndedAt: callTimePtr(c.EndedAt),
		Duration: c.Duration, Summary: callStrPtr(c.Summary), LastOutcome: callStrPtr(c.LastOutcome),
		RoomID: callStrPtr(c.RoomID), JobID: callStrPtr(c.JobID), SIPParticipantID: callStrPtr(c.SIPParticipantID),
		Attempts: c.Attempts, MaxRetries: c.MaxRetries, RetryConfig: callRawOrNull(c.RetryPolicy),
		Metadata: callRawOrNull(c.Metadata), CallMetadata: callRawOrNull(c.CallMetadata), BatchID: callStrPtr(c.BatchID),
		Dialer: callStrPtr(c.Dialer), CreatedAt: formatTime(c.CreatedAt), UpdatedAt: formatTime(c.UpdatedAt),
	}
	switch c.Status {
	case storage.CallInitiated, storage.CallScheduled, storage.CallQueued:
		rec.NextAttemptAt = callTimePtr(&c.DueAt)
	case storage.CallFailed:
		rec.FailureReason = callStrPtr(c.FailureReason)
	}
	return rec
}

// GetCallRecord reads one call of the organization with its attempts.
func GetCallRecord(ctx context.Context, db *storage.DB, orgID, id string) (CallRecord, error) {
	c, err := db.GetCall(ctx, orgID, id)
	if err != nil {
		return CallRecord{}, err
	}
	atts, err := db.CallAttempts(ctx, c.ID)
	if err != nil {
		return CallRecord{}, err
	}
	rec := callRecord(c)
	if err := addCallResult(ctx, db, &rec); err != nil {
		return CallRecord{}, err
	}
	for _, a := range atts {
		ca := CallAttempt{Attempt: a.Attempt, Status: a.Status, FailureReason: callStrPtr(a.FailureReason),
			RoomID: callStrPtr(a.RoomID), Duration: a.Duration, StartedAt: formatTime(a.StartedAt), EndedAt: callTimePtr(a.EndedAt)}
		if a.SIPCode != 0 {
			code := a.SIPCode
			ca.SIPCode = &code
		}
		rec.AttemptHistory = append(rec.AttemptHistory, ca)
	}
	return rec, nil
}

// CallListOptions are the filters, order and page of a call list
// (DECISIONS.md "Calls").
type CallListOptions struct {
	Statuses    []string
	AgentID     string
	Direction   string
	PhoneNumber string
	From, To    *time.Time
	SortBy      string // createdAt (default), scheduledAt, priority
	SortOrder   string // asc or desc (default)
	Limit       int    // default 50, max 100
	Offset      int
}

// CallPage is one page of calls.
type CallPage struct {
	Calls      []CallRecord   `json:"calls"`
	Pagination CallPagination `json:"pagination"`
}

// CallPagination says where the page is; total is the true total.
type CallPagination struct {
	Total   int  `json:"total"`
	Limit   int  `json:"limit"`
	Offset  int  `json:"offset"`
	HasMore bool `json:"hasMore"`
}

var callStatusNames = map[string]bool{
	"initiated": true, "queued": true, "scheduled": true, "connecting": true, "ringing": true, "active": true,
	"completed": true, "failed": true, "cancelled": true, "no_answer": true, "busy": true,
}

// Validate checks the options and applies defaults; errors are 400s.
func (o *CallListOptions) Validate() error {
	for _, s := range o.Statuses {
		if !callStatusNames[s] {
			return badRequest("status " + strconv.Quote(s) + " is not a call status (initiated, queued, scheduled, connecting, ringing, active, completed, failed, cancelled, no_answer, busy)")
		}
	}
	if o.Direction != "" && o.Direction != "inbound" && o.Direction != "outbound" {
		return badRequest("direction must be inbound or outbound")
	}
	if o.PhoneNumber != "" {
		p := cleanPhone(o.PhoneNumber)
		if !validE164(p) {
			return badRequest("phoneNumber " + callMsgE164)
		}
		o.PhoneNumber = p
	}
	switch o.SortBy {
	case "":
		o.SortBy = "createdAt"
	case "createdAt", "scheduledAt", "priority":
	default:
		return badRequest("sortBy must be createdAt, scheduledAt or priority")
	}
	switch strings.ToLower(o.SortOrder) {
	case "":
		o.SortOrder = "desc"
	case "asc", "desc":
		o.SortOrder = strings.ToLower(o.SortOrder)
	default:
		return badRequest("sortOrder must be asc or desc")
	}
	switch {
	case o.Limit == 0:
		o.Limit = 50
	case o.Limit < 1 || o.Limit > 100:
		return badRequest("limit must be from 1 to 100")
	}
	if o.Offset < 0 {
		return badRequest("offset must be 0 or more")
	}
	if o.From != nil && o.To != nil && o.To.Before(*o.From) {
		return badRequest("to must not be before from")
	}
	return nil
}

// ListCallRecords lists the organization's calls.
func ListCallRecords(ctx context.Context, db *storage.DB, orgID string, o CallListOptions) (CallPage, error) {
	if err := o.Validate(); err != nil {
		return CallPage{}, err
	}
	calls, total, err := db.ListCalls(ctx, storage.CallFilter{OrgID: orgID, Statuses: o.Statuses, AgentID: o.AgentID,
		Direction: o.Direction, PhoneNumber: o.PhoneNumber, From: o.From, To: o.To, SortBy: o.SortBy,
		Desc: o.SortOrder == "desc", Limit: o.Limit, Offset: o.Offset})
	if err != nil {
		return CallPage{}, err
	}
	page := CallPage{Calls: make([]CallRecord, len(calls)),
		Pagination: CallPagination{Total: total, Limit: o.Limit, Offset: o.Offset, HasMore: o.Offset+len(calls) < total}}
	for i, c := range calls {
		page.Calls[i] = callRecord(c)
	}
	return page, nil
}

// CancelCallRecord cancels a call that has not ended (409 once it has).
// Hanging up a call being dialled is up to its dial queue: in the server
// process at once, from another process (the CLI) within a heartbeat.
func CancelCallRecord(ctx context.Context, db *storage.DB, orgID, id string) (CallRecord, string, error) {
	_, prev, err := db.CancelCall(ctx, orgID, id, time.Now().UTC())
	if errors.Is(err, storage.ErrCallFinished) {
		return CallRecord{}, prev, &Error{Kind: errs.Conflict,
			Message: fmt.Sprintf("call is already %s and cannot be cancelled", prev), Err: err}
	}
	if isNotFound(err) {
		return CallRecord{}, prev, &Error{Kind: errs.NotFound, Message: "call not found", Err: err}
	}
	if err != nil {
		return CallRecord{}, prev, err
	}
	rec, err := GetCallRecord(ctx, db, orgID, id)
	return rec, prev, err
}

// parseCallListQuery reads the list options from the query string.
func parseCallListQuery(q url.Values) (CallListOptions, error) {
	var o CallListOptions
	for _, v := range q["status"] {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				o.Statuses = append(o.Statuses, s)
			}
		}
	}
	o.AgentID = cleanString(q.Get("agentId"))
	o.Direction = cleanString(q.Get("direction"))
	o.PhoneNumber = cleanString(q.Get("phoneNumber"))
	o.SortBy = cleanString(q.Get("sortBy"))
	o.SortOrder = cleanString(q.Get("sortOrder"))
	for _, f := range []struct {
		name string
		dst  **time.Time
	}{{"from", &o.From}, {"to", &o.To}} {
		if v := cleanString(q.Get(f.name)); v != "" {
			t, ok := parseCallTime(v)
			if !ok {
				return o, badRequest(f.name + " must be an ISO 8601 date-time with offset, e.g. 2026-06-10T14:00:00Z")
			}
			*f.dst = &t
		}
	}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"limit", &o.Limit}, {"offset", &o.Offset}} {
		if v := cleanString(q.Get(f.name)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return o, badRequest(f.name + " must be an integer")
			}
			if n == 0 && f.name == "limit" {
				return o, badRequest("limit must be from 1 to 100")
			}
			*f.dst = n
		}
	}
	return o, nil
}

// listCalls is GET /api/v1/calls.
func (s *Server) listCalls(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	o, err := parseCallListQuery(r.URL.Query())
	if err != nil {
		return err
	}
	page, err := ListCallRecords(r.Context(), s.db, orgID(r), o)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": page})
	return nil
}

// getCall is GET /api/v1/calls/{id}.
func (s *Server) getCall(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	rec, err := GetCallRecord(r.Context(), s.db, orgID(r), p.ByName("id"))
	if isNotFound(err) {
		return &Error{Kind: errs.NotFound, Message: "call not found", Err: err}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": rec})
	return nil
}

// cancelCall is DELETE /api/v1/calls/{id}.
func (s *Server) cancelCall(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id := p.ByName("id")
	rec, prev, err := CancelCallRecord(r.Context(), s.db, orgID(r), id)
	if err != nil {
		return err
	}
	hungUp := false
	if prev == storage.CallConnecting || prev == storage.CallRinging || prev == storage.CallActive {
		hungUp = s.calls.queue.Cancel(id)
	}
	msg := "Call cancelled"
	if hungUp {
		msg = "Call cancelled and hung up"
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": rec, "message": msg})
	return nil
}
