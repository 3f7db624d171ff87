package calls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/clean"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/jsonbody"
	"github.com/agentd/agentd/storage/callstore"
)

// BatchRequest is the body of POST /api/v1/calls/batch. Items stay raw so
// that a bad item fails alone, named by its index, instead of the batch.
type BatchRequest struct {
	AgentID             *string                   `json:"agentId"`
	Calls               []json.RawMessage         `json:"calls"`
	DefaultPriority     *int                      `json:"defaultPriority"`
	DefaultScheduledAt  *string                   `json:"defaultScheduledAt"`
	StopOnError         bool                      `json:"stopOnError"`
	RetryConfig         *dial.RetryConfig         `json:"retryConfig"`
	RetrySchedule       []string                  `json:"retrySchedule"`
	TimezoneAwareConfig *dial.TimezoneAwareConfig `json:"timezoneAwareConfig"`
	// Name names the batch as a campaign (GET /api/v1/calls/batches).
	Name *string `json:"name"`
	// DryRun answers the computed times and the items that would fail
	// without creating anything.
	DryRun bool `json:"dryRun"`
}

// maxBatchName bounds a batch's name.
const maxBatchName = 200

// BatchItem is one call of a batch.
type BatchItem struct {
	ContactPhone      *string        `json:"contactPhone"`
	ContactName       *string        `json:"contactName"`
	ContactEmail      *string        `json:"contactEmail"`
	ScheduledAt       *string        `json:"scheduledAt"`
	Priority          *int           `json:"priority"`
	Timezone          *string        `json:"timezone"`
	LocalScheduleTime *string        `json:"localScheduleTime"`
	CallMetadata      map[string]any `json:"callMetadata"`
	Metadata          map[string]any `json:"metadata"`
}

// BatchResult is the outcome of one item: scheduled, or why not. A failed
// item is data of the answer, not an error of the request.
type BatchResult struct {
	Index        int     `json:"index"`
	Success      bool    `json:"success"`
	CallID       string  `json:"callId,omitempty"`
	Error        string  `json:"error,omitempty"`
	ContactPhone string  `json:"contactPhone"`
	ScheduledAt  *string `json:"scheduledAt,omitempty"`
}

// BatchSummary counts the items of a batch.
type BatchSummary struct {
	Failed         int  `json:"failed"`
	NotProcessed   int  `json:"notProcessed"`
	PartialSuccess bool `json:"partialSuccess"` // some scheduled, some failed or not processed
	Stopped        bool `json:"stopped"`        // stopOnError stopped before the last item
	Successful     int  `json:"successful"`
	TotalRequested int  `json:"totalRequested"`
}

// BatchData is the data of the answer to a batch. Its fields keep the
// alphabetical order the answer always had.
type BatchData struct {
	Agent   AgentName     `json:"agent"`
	AgentID string        `json:"agentId"`
	BatchID string        `json:"batchId,omitempty"` // none for a dry run
	DryRun  bool          `json:"dryRun,omitempty"`
	Name    string        `json:"name"`
	Results []BatchResult `json:"results"`
	Summary BatchSummary  `json:"summary"`
}

// BatchOutcome is a batch that was processed: its data, the client message,
// and Failure when no call at all was scheduled (the answer then carries
// the error next to the per-call results).
type BatchOutcome struct {
	Data    BatchData
	Message string
	Failure *errs.Error
}

// batchValid is a batch item that passed its own checks.
type batchValid struct {
	index              int
	phone, name, email string
	priority           int
	callMeta, meta     map[string]any
	plan               dial.PlanItem
	explicitTime       bool
	at                 time.Time
	window             dial.Window
}

// batchSettings is the validated top level of a batch request.
type batchSettings struct {
	agentID     string
	name        string
	defPriority int
	defAt       *time.Time
	policy      dial.RetryPolicy
	tz          *dial.TimezoneAwareConfig
}

// validateBatch checks the top level of a batch request; an error here
// fails the whole request.
func validateBatch(req BatchRequest) (batchSettings, error) {
	var bs batchSettings
	var err error
	if bs.agentID, err = checkAgentID(req.AgentID); err != nil {
		return bs, err
	}
	switch n := len(req.Calls); {
	case req.Calls == nil:
		return bs, invalid("calls", "calls is required: an array of 1 to 1000 calls")
	case n == 0:
		return bs, invalid("calls", "calls must not be empty (1 to 1000 calls)")
	case n > MaxBatch:
		return bs, invalid("calls", fmt.Sprintf("calls has %d calls; at most %d per request", n, MaxBatch))
	}
	if bs.defPriority, err = checkPriority("defaultPriority", req.DefaultPriority, DefaultPriority); err != nil {
		return bs, err
	}
	if bs.name = cleanOpt(req.Name); len([]rune(bs.name)) > maxBatchName {
		return bs, invalid("name", fmt.Sprintf("name is too long (max %d characters)", maxBatchName))
	}
	if bs.defAt, err = checkTime("defaultScheduledAt", req.DefaultScheduledAt); err != nil {
		return bs, err
	}
	var rc dial.RetryConfig
	if req.RetryConfig != nil {
		rc = *req.RetryConfig
	}
	if len(req.RetrySchedule) > 0 {
		if len(rc.RetrySchedule) > 0 {
			return bs, invalid("retrySchedule", "retrySchedule: give it at the top level or in retryConfig, not both")
		}
		rc.RetrySchedule = req.RetrySchedule
	}
	for i := range rc.RetrySchedule {
		rc.RetrySchedule[i] = clean.String(rc.RetrySchedule[i])
	}
	if bs.policy, err = rc.Policy(); err != nil {
		prefix := "retryConfig."
		if strings.HasPrefix(errField(err), "retrySchedule") && len(req.RetrySchedule) > 0 {
			prefix = "" // the top-level field
		}
		return bs, retryError(prefix, err)
	}
	bs.tz = req.TimezoneAwareConfig
	if tz := bs.tz; tz != nil {
		tz.LocalScheduleTime = clean.String(tz.LocalScheduleTime)
		tz.BusinessHoursStart = clean.String(tz.BusinessHoursStart)
		tz.BusinessHoursEnd = clean.String(tz.BusinessHoursEnd)
		if err := tz.Validate(); err != nil {
			return bs, invalid("timezoneAwareConfig", "invalid timezone configuration: "+err.Error())
		}
	}
	return bs, nil
}

// Batch schedules 1 to 1000 calls for one agent. Each item is validated
// and planned on its own; with stopOnError the first failure stops the
// batch.
func (s *Service) Batch(ctx context.Context, c Caller, req BatchRequest) (BatchOutcome, error) {
	now := s.now()
	bs, err := validateBatch(req)
	if err != nil {
		return BatchOutcome{}, err
	}
	agent, err := s.agent(ctx, c, bs.agentID)
	if err != nil {
		return BatchOutcome{}, err
	}
	if err := checkSchedulable(agent); err != nil {
		return BatchOutcome{}, err
	}
	hours, err := s.orgHours(ctx, agent.OrgID)
	if err != nil {
		return BatchOutcome{}, err
	}

	// Every item is checked on its own first, then the valid numbers
	// against the do-not-call list at once; stopOnError then stops at the
	// first failure of either kind, in item order.
	type checked struct {
		v     batchValid
		phone string
		err   *errs.Error
	}
	items := make([]checked, len(req.Calls))
	phones := make([]string, 0, len(req.Calls))
	for i, raw := range req.Calls {
		it, phone, err := validateBatchItem(raw, bs.defPriority)
		it.index = i
		items[i] = checked{it, phone, err}
		if err == nil {
			phones = append(phones, it.phone)
		}
	}
	listed, err := s.db.Calls.DNCListedAmong(ctx, agent.OrgID, phones)
	if err != nil {
		return BatchOutcome{}, err
	}
	results := make([]BatchResult, 0, len(req.Calls))
	var valid []batchValid
	stopped := false
	for i, it := range items {
		if it.err == nil && listed[it.v.phone] {
			it.err = errDoNotCall("contactPhone")
		}
		if it.err != nil {
			results = append(results, BatchResult{Index: i, Error: it.err.Message, ContactPhone: it.phone})
			if req.StopOnError {
				stopped = i < len(req.Calls)-1
				break
			}
			continue
		}
		it.v.plan.Hours = hoursWindow(hours, it.v.plan.Timezone, it.v.callMeta, it.v.phone)
		valid = append(valid, it.v)
	}
	// Plan the times together (staggering and maxCallsPerDay depend on the
	// whole set). With stopOnError the first item whose time cannot be
	// planned stops the batch: the calls after it are dropped and the rest
	// planned again without them.
	cfg := dial.BatchConfig{TZ: bs.tz}
	if bs.defAt != nil {
		cfg.DefaultScheduledAt = *bs.defAt
	}
	var planned []dial.Planned
	for {
		items := make([]dial.PlanItem, len(valid))
		for k, v := range valid {
			items[k] = v.plan
		}
		if planned, err = dial.PlanBatch(now, cfg, items); err != nil {
			return BatchOutcome{}, invalid("timezoneAwareConfig", "invalid timezone configuration: "+err.Error())
		}
		k := slices.IndexFunc(planned, func(p dial.Planned) bool { return p.Err != nil })
		if !req.StopOnError || k < 0 {
			break
		}
		// Every earlier failure has a higher index (validation stopped there).
		stop := valid[k]
		results = []BatchResult{{Index: stop.index, Error: planError(planned[k].Err), ContactPhone: stop.phone}}
		stopped = stop.index < len(req.Calls)-1
		valid = valid[:k]
	}

	batchID := ""
	if !req.DryRun {
		batchID = uuid.NewString()
	}
	var rows []callstore.Call
	var ok []batchValid
	for k, v := range valid {
		if p := planned[k]; p.Err != nil {
			results = append(results, BatchResult{Index: v.index, Error: planError(p.Err), ContactPhone: v.phone})
			continue
		}
		v.at, v.window = planned[k].At, planned[k].Window
		var schedAt *time.Time
		if v.explicitTime || v.at.After(now) {
			t := v.at
			schedAt = &t
		}
		callerID := s.callers.pick(agent, v.phone, "")
		rows = append(rows, callstore.Call{
			OrgID: agent.OrgID, AgentID: agent.ID, Status: callstore.CallScheduled, PhoneNumber: v.phone,
			CallerID: callerID, ContactName: v.name, ContactEmail: v.email, Priority: v.priority,
			ScheduledAt: schedAt, DueAt: v.at, MaxRetries: bs.policy.MaxRetries, RetryPolicy: policyJSON(bs.policy),
			Window: windowJSON(v.window), Metadata: recordMetadata(v.meta, callerID, v.priority),
			CallMetadata: metadataJSON(v.callMeta), BatchID: batchID,
		})
		ok = append(ok, v)
	}
	switch {
	case req.DryRun:
		for k, c := range rows {
			at := formatTime(c.DueAt)
			results = append(results, BatchResult{Index: ok[k].index, Success: true, ContactPhone: c.PhoneNumber, ScheduledAt: &at})
		}
	case len(rows) > 0:
		_, created, err := s.db.Calls.CreateBatch(ctx, callstore.Batch{ID: batchID, OrgID: agent.OrgID, AgentID: agent.ID, Name: bs.name}, rows)
		if err != nil {
			return BatchOutcome{}, err
		}
		for k, c := range created {
			at := formatTime(c.DueAt)
			results = append(results, BatchResult{Index: ok[k].index, Success: true, CallID: c.ID,
				ContactPhone: c.PhoneNumber, ScheduledAt: &at})
		}
		s.sched.Wake()
	default:
		batchID = uuid.NewString() // nothing stored: the id names no campaign
	}
	slices.SortFunc(results, func(a, b BatchResult) int { return a.Index - b.Index })
	failed := len(results) - len(rows)
	out := BatchOutcome{
		Message: fmt.Sprintf("%d of %d calls scheduled", len(rows), len(req.Calls)),
		Data: BatchData{
			Agent: AgentName{ID: agent.ID, Name: agent.Name}, AgentID: agent.ID, BatchID: batchID,
			DryRun: req.DryRun, Name: bs.name, Results: results,
			Summary: BatchSummary{
				TotalRequested: len(req.Calls), Successful: len(rows), Failed: failed,
				PartialSuccess: len(rows) > 0 && (failed > 0 || stopped), Stopped: stopped,
				NotProcessed: len(req.Calls) - len(results),
			},
		},
	}
	if len(rows) == 0 {
		out.Message = "all calls failed"
		if stopped {
			out.Message = "the first call failed and stopOnError stopped the batch"
		}
	}
	if stopped {
		out.Message += fmt.Sprintf("; stopped after the first failure (%d calls not processed)", len(req.Calls)-len(results))
	}
	if req.DryRun {
		out.Message = fmt.Sprintf("dry run: %d of %d calls would be scheduled; nothing was created", len(rows), len(req.Calls))
		if stopped {
			out.Message += fmt.Sprintf("; stopOnError would stop after the first failure (%d calls not processed)", len(req.Calls)-len(results))
		}
		return out, nil
	}
	if len(rows) == 0 {
		out.Failure = invalid("calls", out.Message)
	}
	return out, nil
}

// planError words a planning failure of one item.
func planError(err error) string {
	if errors.Is(err, dial.ErrNoWindow) {
		return "no allowed call time: the call window never opens (check allowedDays, business hours and doNotCallBefore/After)"
	}
	return err.Error()
}

// validateBatchItem decodes and checks one item. The phone is returned
// (cleaned when possible) for the result even when the item fails.
func validateBatchItem(raw json.RawMessage, defPriority int) (batchValid, string, *errs.Error) {
	var it BatchItem
	var v batchValid
	if err := jsonbody.Decode(raw, &it); err != nil {
		var e *errs.Error
		if !errors.As(err, &e) {
			return v, "", errs.New(errs.Invalid, err.Error())
		}
		if errors.Is(err, jsonbody.ErrNotObject) {
			return v, "", errs.New(errs.Invalid, "must be an object")
		}
		return v, "", e
	}
	phone := ""
	if it.ContactPhone != nil {
		phone = clean.Phone(*it.ContactPhone)
	}
	fail := func(err error) (batchValid, string, *errs.Error) {
		var e *errs.Error
		if !errors.As(err, &e) {
			e = errs.New(errs.Invalid, err.Error())
		}
		return v, phone, e
	}
	var err error
	if v.phone, err = checkPhone("contactPhone", it.ContactPhone); err != nil {
		return fail(err)
	}
	if v.name, err = checkName("contactName", it.ContactName); err != nil {
		return fail(err)
	}
	if v.email, err = checkEmail("contactEmail", it.ContactEmail); err != nil {
		return fail(err)
	}
	at, err := checkTime("scheduledAt", it.ScheduledAt)
	if err != nil {
		return fail(err)
	}
	if v.priority, err = checkPriority("priority", it.Priority, defPriority); err != nil {
		return fail(err)
	}
	if it.CallMetadata != nil {
		v.callMeta = cleanValue(it.CallMetadata).(map[string]any)
		if err := checkMetadata("callMetadata", v.callMeta); err != nil {
			return fail(err)
		}
	}
	if it.Metadata != nil {
		v.meta = cleanValue(it.Metadata).(map[string]any)
	}
	tz := cleanOpt(it.Timezone)
	if tz != "" {
		if _, err := dial.LoadZone(tz); err != nil {
			return fail(invalid("timezone", "timezone must be an IANA time zone such as America/New_York"))
		}
	}
	lst := cleanOpt(it.LocalScheduleTime)
	if lst != "" {
		if _, err := dial.ParseHHMM(lst); err != nil {
			return fail(invalid("localScheduleTime", "localScheduleTime must be HH:mm (00:00 to 23:59)"))
		}
	}
	v.plan = dial.PlanItem{Timezone: tz, LocalScheduleTime: lst}
	if at != nil {
		v.plan.ScheduledAt, v.explicitTime = *at, true
	}
	if v.callMeta != nil {
		v.plan.MetadataTimezone, _ = v.callMeta["timezone"].(string)
		v.plan.DoNotCallBefore, _ = v.callMeta["doNotCallBefore"].(string)
		v.plan.DoNotCallAfter, _ = v.callMeta["doNotCallAfter"].(string)
	}
	return v, v.phone, nil
}
