package calls

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Record is a call as GET /api/v1/calls/{id}, the list and the CLI show it.
type Record struct {
	ID               string          `json:"id"`
	Status           string          `json:"status"`
	Direction        string          `json:"direction"`
	AgentID          string          `json:"agentId"`
	Agent            RecordAgent     `json:"agent"`
	PhoneNumber      string          `json:"phoneNumber"`
	CallerID         string          `json:"callerId"`
	Contact          Contact         `json:"contact"`
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
	AttemptHistory   []Attempt       `json:"attemptHistory,omitempty"`
	CreatedAt        string          `json:"createdAt"`
	UpdatedAt        string          `json:"updatedAt"`

	// The voice agent's result (result.go): set by Get, nil (so not
	// shown) in lists.
	*ResultView
	// Latency of agentd's own voice loop (latency.go): Get, when it has one.
	Latency *Latency `json:"latency,omitempty"`
	// Call control of agentd's own voice loop (control.go): Get.
	AnsweredBy *string         `json:"answeredBy,omitempty"`
	Transfers  json.RawMessage `json:"transfers,omitempty"`
}

// RecordAgent is the agent of a call record.
type RecordAgent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

// Contact is the callee of a call record.
type Contact struct {
	Phone string  `json:"phone"`
	Name  *string `json:"name"`
	Email *string `json:"email"`
}

// Attempt is one dial attempt in a call record. Its failure reason has
// the call's own name for it, failure_reason (one name per concept).
type Attempt struct {
	Attempt       int      `json:"attempt"`
	Status        string   `json:"status"` // the call statuses, or voicemail
	FailureReason *string  `json:"failure_reason"`
	SIPCode       *int     `json:"sipCode"`
	RoomID        *string  `json:"roomId"`
	Duration      *float64 `json:"duration"`
	StartedAt     string   `json:"startedAt"`
	EndedAt       *string  `json:"endedAt"`
}

// strPtr is nil (JSON null) for "".
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func timePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := formatTime(*t)
	return &s
}

func rawOrNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// record shapes a stored call.
func record(c callstore.Call) Record {
	rec := Record{
		ID: c.ID, Status: c.Status, Direction: c.Direction, AgentID: c.AgentID,
		Agent:       RecordAgent{ID: c.AgentID, Name: c.AgentName, Type: c.AgentType},
		PhoneNumber: c.PhoneNumber, CallerID: c.CallerID,
		Contact:  Contact{Phone: c.PhoneNumber, Name: strPtr(c.ContactName), Email: strPtr(c.ContactEmail)},
		Priority: c.Priority, ScheduledAt: timePtr(c.ScheduledAt),
		StartedAt: timePtr(c.StartedAt), AnsweredAt: timePtr(c.AnsweredAt), EndedAt: timePtr(c.EndedAt),
		Duration: c.Duration, Summary: strPtr(c.Summary), LastOutcome: strPtr(c.LastOutcome),
		RoomID: strPtr(c.RoomID), JobID: strPtr(c.JobID), SIPParticipantID: strPtr(c.SIPParticipantID),
		Attempts: c.Attempts, MaxRetries: c.MaxRetries, RetryConfig: rawOrNull(c.RetryPolicy),
		Metadata: rawOrNull(c.Metadata), CallMetadata: rawOrNull(c.CallMetadata), BatchID: strPtr(c.BatchID),
		Dialer: strPtr(c.Dialer), CreatedAt: formatTime(c.CreatedAt), UpdatedAt: formatTime(c.UpdatedAt),
	}
	switch c.Status {
	case callstore.CallInitiated, callstore.CallScheduled, callstore.CallQueued:
		rec.NextAttemptAt = timePtr(&c.DueAt)
		if c.Attempts > 0 || c.ScheduledAt != nil {
			// Waiting for a computed time (a retry, calling hours): every
			// computed time is returned in scheduledAt (DECISIONS.md).
			rec.ScheduledAt = timePtr(&c.DueAt)
		}
	case callstore.CallFailed:
		rec.FailureReason = strPtr(c.FailureReason)
	}
	return rec
}

// errCallNotFound is the answer for a call that does not exist or belongs
// to another organization.
func errCallNotFound(err error) error {
	return &errs.Error{Kind: errs.NotFound, Message: "call not found", Err: err}
}

// Get reads one call of the organization with its attempts and result.
func (s *Service) Get(ctx context.Context, orgID, id string) (Record, error) {
	c, err := s.db.Calls.GetCall(ctx, orgID, id)
	if errors.Is(err, sqldb.ErrNotFound) {
		return Record{}, errCallNotFound(err)
	}
	if err != nil {
		return Record{}, err
	}
	atts, err := s.db.Calls.CallAttempts(ctx, c.ID)
	if err != nil {
		return Record{}, err
	}
	res, err := s.db.Calls.GetCallResult(ctx, c.ID)
	if errors.Is(err, sqldb.ErrNotFound) {
		return s.withVoice(ctx, View(c, atts, nil))
	}
	if err != nil {
		return Record{}, err
	}
	return s.withVoice(ctx, View(c, atts, &res))
}

// View is a call as GET /api/v1/calls/{id} shows it: the record, the voice
// agent's result (nil: none yet) and the attempt history.
func View(c callstore.Call, atts []callstore.CallAttempt, res *callstore.CallResult) Record {
	rec := record(c)
	v := &ResultView{Transcript: json.RawMessage("null")}
	rec.ResultView = v
	if res != nil {
		if len(res.Transcript) > 0 {
			v.Transcript = res.Transcript
		}
		v.Outcome = res.Outcome
		v.ResultUpdatedAt = timePtr(&res.UpdatedAt)
		if res.Summary != nil {
			rec.Summary = res.Summary
		}
	}
	for _, a := range atts {
		ca := Attempt{Attempt: a.Attempt, Status: a.Status, FailureReason: strPtr(a.FailureReason),
			RoomID: strPtr(a.RoomID), Duration: a.Duration, StartedAt: formatTime(a.StartedAt), EndedAt: timePtr(a.EndedAt)}
		if a.SIPCode != 0 {
			code := a.SIPCode
			ca.SIPCode = &code
		}
		rec.AttemptHistory = append(rec.AttemptHistory, ca)
	}
	return rec
}

// EventView is View of a snapshot taken inside an event's transaction, the
// data of every call.* event.
func EventView(s callstore.CallSnapshot) any { return View(s.Call, s.Attempts, s.Result) }

// CancelCall cancels a call that has not ended (a conflict once it has) and
// returns it with the status it had. Hanging up a call being dialled is up
// to its dial queue: in the server process at once (Service.Cancel), from
// another process (the CLI) within a heartbeat.
func (s *Service) CancelCall(ctx context.Context, orgID, id string) (Record, string, error) {
	_, prev, err := s.db.Calls.CancelCall(ctx, orgID, id, time.Now().UTC())
	if errors.Is(err, callstore.ErrCallFinished) {
		return Record{}, prev, &errs.Error{Kind: errs.Conflict,
			Message: "call is already " + prev + " and cannot be cancelled", Err: err}
	}
	if errors.Is(err, sqldb.ErrNotFound) {
		return Record{}, prev, errCallNotFound(err)
	}
	if err != nil {
		return Record{}, prev, err
	}
	rec, err := s.Get(ctx, orgID, id)
	return rec, prev, err
}

// Cancel cancels a call and hangs it up when this process is dialling it.
// It returns the call and the client message.
func (s *Service) Cancel(ctx context.Context, orgID, id string) (Record, string, error) {
	rec, prev, err := s.CancelCall(ctx, orgID, id)
	if err != nil {
		return Record{}, "", err
	}
	if prev == callstore.CallConnecting || prev == callstore.CallRinging || prev == callstore.CallActive {
		if s.queue.Cancel(id) {
			return rec, "Call cancelled and hung up", nil
		}
	}
	return rec, "Call cancelled", nil
}
