package calls

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"time"

	"github.com/agentd/agentd/internal/clean"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Batches as campaigns: listed, read with the figures of their calls,
// paused (no new dials; calls in progress finish), resumed and cancelled
// (every call not final is cancelled; calls being dialled are hung up).

// BatchView is a batch as the API and the CLI show it.
type BatchView struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	AgentID   string     `json:"agentId"`
	Agent     AgentName  `json:"agent"`
	Status    string     `json:"status"` // running, paused, completed or cancelled
	CreatedAt string     `json:"createdAt"`
	UpdatedAt string     `json:"updatedAt"`
	Total     int        `json:"total"`
	Counts    CallCounts `json:"counts"`
	// Attempts is the number of dial attempts of all its calls together.
	Attempts int `json:"attempts"`
	// AnswerRate is the share of dialled calls answered by a person
	// (completed, voicemail left out), four decimals; null before a dial.
	AnswerRate *float64 `json:"answerRate"`
	// NextDueAt is the earliest time a waiting call of it falls due.
	NextDueAt *string `json:"nextDueAt"`
}

// CallCounts counts a batch's calls by status.
type CallCounts struct {
	Initiated  int `json:"initiated"`
	Scheduled  int `json:"scheduled"`
	Queued     int `json:"queued"`
	Connecting int `json:"connecting"`
	Ringing    int `json:"ringing"`
	Active     int `json:"active"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	Cancelled  int `json:"cancelled"`
	NoAnswer   int `json:"no_answer"`
	Busy       int `json:"busy"`
}

// BatchPage is one page of batches.
type BatchPage struct {
	Batches    []BatchView `json:"batches"`
	Pagination Pagination  `json:"pagination"`
}

// BatchListOptions filter and page the batch list (newest first).
type BatchListOptions struct {
	AgentID string
	Status  string // running, paused, completed or cancelled
	Limit   int    // default 50, max 100
	Offset  int
}

var batchStatuses = map[string]bool{callstore.BatchRunning: true, callstore.BatchPaused: true,
	callstore.BatchCompleted: true, callstore.BatchCancelled: true}

// Validate checks the options and applies defaults.
func (o *BatchListOptions) Validate() error {
	if o.Status != "" && !batchStatuses[o.Status] {
		return invalid("status", "status must be running, paused, completed or cancelled")
	}
	if err := clean.CheckPage(&o.Limit, o.Offset, 100); err != nil {
		return err
	}
	return nil
}

// ParseBatchQuery reads the list options from a query string.
func ParseBatchQuery(q url.Values) (BatchListOptions, error) {
	o := BatchListOptions{AgentID: clean.String(q.Get("agentId")), Status: clean.String(q.Get("status"))}
	if err := clean.Page(q, &o.Limit, &o.Offset, 100); err != nil {
		return o, err
	}
	return o, nil
}

// batchView shapes a stored batch.
func batchView(b callstore.Batch) BatchView {
	v := BatchView{ID: b.ID, Name: b.Name, AgentID: b.AgentID, Agent: AgentName{ID: b.AgentID, Name: b.AgentName},
		Status: b.Status, CreatedAt: formatTime(b.CreatedAt), UpdatedAt: formatTime(b.UpdatedAt), Total: b.Total,
		Attempts: b.Attempts, NextDueAt: timePtr(b.NextDueAt)}
	c := b.Counts
	v.Counts = CallCounts{Initiated: c[callstore.CallInitiated], Scheduled: c[callstore.CallScheduled], Queued: c[callstore.CallQueued],
		Connecting: c[callstore.CallConnecting], Ringing: c[callstore.CallRinging], Active: c[callstore.CallActive],
		Completed: c[callstore.CallCompleted], Failed: c[callstore.CallFailed], Cancelled: c[callstore.CallCancelled],
		NoAnswer: c[callstore.CallNoAnswer], Busy: c[callstore.CallBusy]}
	if b.Dialled > 0 {
		r := math.Round(float64(b.Answered)/float64(b.Dialled)*10000) / 10000
		v.AnswerRate = &r
	}
	return v
}

// ListBatches lists the organization's batches, newest first.
func (s *Service) ListBatches(ctx context.Context, orgID string, o BatchListOptions) (BatchPage, error) {
	if err := o.Validate(); err != nil {
		return BatchPage{}, err
	}
	bs, total, err := s.db.Calls.ListBatches(ctx, callstore.BatchFilter{OrgID: orgID, AgentID: o.AgentID, Status: o.Status,
		Limit: o.Limit, Offset: o.Offset})
	if err != nil {
		return BatchPage{}, err
	}
	page := BatchPage{Batches: make([]BatchView, len(bs)),
		Pagination: Pagination{Total: total, Limit: o.Limit, Offset: o.Offset, HasMore: o.Offset+len(bs) < total}}
	for i, b := range bs {
		page.Batches[i] = batchView(b)
	}
	return page, nil
}

// errBatchNotFound answers a batch that does not exist or belongs to
// another organization.
func errBatchNotFound(err error) error {
	return &errs.Error{Kind: errs.NotFound, Message: "batch not found", Err: err}
}

// GetBatch reads one batch of the organization with its figures.
func (s *Service) GetBatch(ctx context.Context, orgID, id string) (BatchView, error) {
	b, err := s.db.Calls.GetBatch(ctx, orgID, id)
	if errors.Is(err, sqldb.ErrNotFound) {
		return BatchView{}, errBatchNotFound(err)
	}
	if err != nil {
		return BatchView{}, err
	}
	return batchView(b), nil
}

// PauseBatchAt stops new dials of a running batch; calls in progress finish.
// A cancelled or completed batch is a conflict; a paused one stays paused.
func (s *Service) PauseBatchAt(ctx context.Context, orgID, id string, now time.Time) (BatchView, error) {
	return s.setBatch(ctx, orgID, id, "pause", func() error { return s.db.Calls.PauseBatch(ctx, orgID, id, now) })
}

// ResumeBatchAt lets a paused batch dial again (the caller wakes the
// scheduler). A cancelled or completed batch is a conflict.
func (s *Service) ResumeBatchAt(ctx context.Context, orgID, id string, now time.Time) (BatchView, error) {
	return s.setBatch(ctx, orgID, id, "resume", func() error { return s.db.Calls.ResumeBatch(ctx, orgID, id, now) })
}

func (s *Service) setBatch(ctx context.Context, orgID, id, verb string, do func() error) (BatchView, error) {
	cur, err := s.GetBatch(ctx, orgID, id)
	if err != nil {
		return BatchView{}, err
	}
	if cur.Status == callstore.BatchCompleted || cur.Status == callstore.BatchCancelled {
		return BatchView{}, &errs.Error{Kind: errs.Conflict,
			Message: fmt.Sprintf("batch is %s: nothing to %s", cur.Status, verb)}
	}
	err = do()
	switch {
	case errors.Is(err, sqldb.ErrNotFound):
		return BatchView{}, errBatchNotFound(err)
	case errors.Is(err, callstore.ErrBatchState):
		return BatchView{}, &errs.Error{Kind: errs.Conflict, Message: "batch is cancelled: nothing to " + verb, Err: err}
	case err != nil:
		return BatchView{}, err
	}
	return s.GetBatch(ctx, orgID, id)
}

// CancelBatchAt cancels every call of the batch that is not final; it
// returns the batch, how many calls it cancelled and the ids of those being
// dialled (hung up by the dial queue that holds them: at once in the
// server, within a heartbeat when cancelled from the CLI).
func (s *Service) CancelBatchAt(ctx context.Context, orgID, id string, now time.Time) (BatchView, int, []string, error) {
	n, live, err := s.db.Calls.CancelBatch(ctx, orgID, id, now)
	if errors.Is(err, sqldb.ErrNotFound) {
		return BatchView{}, 0, nil, errBatchNotFound(err)
	}
	if err != nil {
		return BatchView{}, 0, nil, err
	}
	v, err := s.GetBatch(ctx, orgID, id)
	return v, n, live, err
}

// ListBatchesQuery lists the organization's batches by the options of a
// query string (GET /api/v1/calls/batches).
func (s *Service) ListBatchesQuery(ctx context.Context, orgID string, q url.Values) (BatchPage, error) {
	o, err := ParseBatchQuery(q)
	if err != nil {
		return BatchPage{}, err
	}
	return s.ListBatches(ctx, orgID, o)
}

// PauseBatch pauses a batch and returns it with the client message.
func (s *Service) PauseBatch(ctx context.Context, orgID, id string) (BatchView, string, error) {
	v, err := s.PauseBatchAt(ctx, orgID, id, s.now())
	return v, "Batch paused: no new calls are dialled; calls in progress finish", err
}

// ResumeBatch resumes a batch and wakes the scheduler for its due calls.
func (s *Service) ResumeBatch(ctx context.Context, orgID, id string) (BatchView, string, error) {
	v, err := s.ResumeBatchAt(ctx, orgID, id, s.now())
	if err == nil {
		s.sched.Wake()
	}
	return v, "Batch resumed", err
}

// CancelBatch cancels a batch and hangs up its calls this process dials.
func (s *Service) CancelBatch(ctx context.Context, orgID, id string) (BatchView, string, error) {
	v, n, live, err := s.CancelBatchAt(ctx, orgID, id, s.now())
	if err != nil {
		return BatchView{}, "", err
	}
	hung := 0
	for _, cid := range live {
		if s.queue.Cancel(cid) {
			hung++
		}
	}
	return v, fmt.Sprintf("Batch cancelled: %d calls cancelled, %d hung up", n, hung), nil
}
