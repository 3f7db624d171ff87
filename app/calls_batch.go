package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/storage"
)

// callBatchRequest is the body of POST /api/v1/calls/batch. Items stay raw so
// that a bad item fails alone, named by its index, instead of the batch.
type callBatchRequest struct {
	AgentID             *string                   `json:"agentId"`
	Calls               []json.RawMessage         `json:"calls"`
	DefaultPriority     *int                      `json:"defaultPriority"`
	DefaultScheduledAt  *string                   `json:"defaultScheduledAt"`
	StopOnError         bool                      `json:"stopOnError"`
	RetryConfig         *dial.RetryConfig         `json:"retryConfig"`
	RetrySchedule       []string                  `json:"retrySchedule"`
	TimezoneAwareConfig *dial.TimezoneAwareConfig `json:"timezoneAwareConfig"`
}

// callBatchItem is one call of a batch.
type callBatchItem struct {
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

// callBatchResult is one entry of the results array.
type callBatchResult struct {
	Index        int     `json:"index"`
	Success      bool    `json:"success"`
	CallID       string  `json:"callId,omitempty"`
	Error        string  `json:"error,omitempty"`
	ContactPhone string  `json:"contactPhone"`
	ScheduledAt  *string `json:"scheduledAt,omitempty"`
}

// callBatchValid is a batch item that passed its own checks.
type callBatchValid struct {
	index              int
	phone, name, email string
	priority           int
	callMeta, meta     map[string]any
	plan               dial.PlanItem
	explicitTime       bool
	at                 time.Time
	window             dial.Window
}

// batchCalls is POST /api/v1/calls/batch: 201 when every call was
// scheduled, 207 when some failed, 400 when none was (the body then carries
// the per-call results next to the error).
func (s *Server) batchCalls(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var req callBatchRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	now := s.now()
	agentID, err := checkCallAgentID(req.AgentID)
	if err != nil {
		return err
	}
	switch n := len(req.Calls); {
	case req.Calls == nil:
		return badRequest("calls is required: an array of 1 to 1000 calls")
	case n == 0:
		return badRequest("calls must not be empty (1 to 1000 calls)")
	case n > callMaxBatch:
		return badRequest(fmt.Sprintf("calls has %d calls; at most %d per request", n, callMaxBatch))
	}
	defPriority, err := checkCallPriority("defaultPriority", req.DefaultPriority, callDefaultPriority)
	if err != nil {
		return err
	}
	defAt, err := checkCallTime("defaultScheduledAt", req.DefaultScheduledAt)
	if err != nil {
		return err
	}
	var rc dial.RetryConfig
	if req.RetryConfig != nil {
		rc = *req.RetryConfig
	}
	if len(req.RetrySchedule) > 0 {
		if len(rc.RetrySchedule) > 0 {
			return badRequest("retrySchedule: give it at the top level or in retryConfig, not both")
		}
		rc.RetrySchedule = req.RetrySchedule
	}
	for i := range rc.RetrySchedule {
		rc.RetrySchedule[i] = cleanString(rc.RetrySchedule[i])
	}
	policy, err := rc.Policy()
	if err != nil {
		prefix := "retryConfig."
		if strings.HasPrefix(callErrField(err), "retrySchedule") && len(req.RetrySchedule) > 0 {
			prefix = "" // the top-level field
		}
		return callRetryError(prefix, err)
	}
	tz := req.TimezoneAwareConfig
	if tz != nil {
		tz.LocalScheduleTime = cleanString(tz.LocalScheduleTime)
		tz.BusinessHoursStart = cleanString(tz.BusinessHoursStart)
		tz.BusinessHoursEnd = cleanString(tz.BusinessHoursEnd)
		if err := tz.Validate(); err != nil {
			return badRequest("invalid timezone configuration: " + err.Error())
		}
	}
	agent, err := s.callAgent(r.Context(), r, agentID)
	if err != nil {
		return err
	}
	agentCaller, err := checkSchedulableAgent(agent, "")
	if err != nil {
		return err
	}

	results := make([]callBatchResult, 0, len(req.Calls))
	var valid []callBatchValid
	stopped := false
	for i, raw := range req.Calls {
		it, phone, err := validateCallBatchItem(raw, defPriority)
		if err != nil {
			results = append(results, callBatchResult{Index: i, Error: err.Error(), ContactPhone: phone})
			if req.StopOnError {
				stopped = i < len(req.Calls)-1
				break
			}
			continue
		}
		it.index = i
		valid = append(valid, it)
	}
	// Plan the times together (staggering and maxCallsPerDay depend on the
	// whole set). With stopOnError the first item whose time cannot be
	// planned stops the batch: the calls after it are dropped and the rest
	// planned again without them.
	cfg := dial.BatchConfig{TZ: tz}
	if defAt != nil {
		cfg.DefaultScheduledAt = *defAt
	}
	var planned []dial.Planned
	for {
		items := make([]dial.PlanItem, len(valid))
		for k, v := range valid {
			items[k] = v.plan
		}
		if planned, err = dial.PlanBatch(now, cfg, items); err != nil {
			return badRequest("invalid timezone configuration: " + err.Error())
		}
		k := slices.IndexFunc(planned, func(p dial.Planned) bool { return p.Err != nil })
		if !req.StopOnError || k < 0 {
			break
		}
		// Every earlier failure has a higher index (validation stopped there).
		stop := valid[k]
		results = []callBatchResult{{Index: stop.index, Error: callPlanError(planned[k].Err), ContactPhone: stop.phone}}
		stopped = stop.index < len(req.Calls)-1
		valid = valid[:k]
	}

	batchID := uuid.NewString()
	var rows []storage.Call
	var ok []callBatchValid
	for k, v := range valid {
		if p := planned[k]; p.Err != nil {
			results = append(results, callBatchResult{Index: v.index, Error: callPlanError(p.Err), ContactPhone: v.phone})
			continue
		}
		v.at, v.window = planned[k].At, planned[k].Window
		var schedAt *time.Time
		if v.explicitTime || v.at.After(now) {
			t := v.at
			schedAt = &t
		}
		rows = append(rows, storage.Call{
			OrgID: agent.OrgID, AgentID: agent.ID, Status: storage.CallScheduled, PhoneNumber: v.phone,
			CallerID: agentCaller, ContactName: v.name, ContactEmail: v.email, Priority: v.priority,
			ScheduledAt: schedAt, DueAt: v.at, MaxRetries: policy.MaxRetries, RetryPolicy: callPolicyJSON(policy),
			Window: callWindowJSON(v.window), Metadata: callRecordMetadata(v.meta, agentCaller, v.priority),
			CallMetadata: callMetadataJSON(v.callMeta), BatchID: batchID,
		})
		ok = append(ok, v)
	}
	if len(rows) > 0 {
		created, err := s.db.CreateCalls(r.Context(), rows)
		if err != nil {
			return err
		}
		for k, c := range created {
			at := formatTime(c.DueAt)
			results = append(results, callBatchResult{Index: ok[k].index, Success: true, CallID: c.ID,
				ContactPhone: c.PhoneNumber, ScheduledAt: &at})
		}
		s.calls.sched.Wake()
	}
	sortCallResults(results)
	failed := len(results) - len(rows)
	status, msg := http.StatusCreated, fmt.Sprintf("%d of %d calls scheduled", len(rows), len(req.Calls))
	switch {
	case len(rows) == 0:
		status, msg = http.StatusBadRequest, "all calls failed"
		if stopped {
			msg = "the first call failed and stopOnError stopped the batch"
		}
	case failed > 0 || stopped:
		status = http.StatusMultiStatus
	}
	if stopped {
		msg += fmt.Sprintf("; stopped after the first failure (%d calls not processed)", len(req.Calls)-len(results))
	}
	data := map[string]any{
		"agentId": agent.ID,
		"agent":   map[string]any{"id": agent.ID, "name": agent.Name},
		"batchId": batchID,
		"summary": map[string]any{
			"totalRequested": len(req.Calls), "successful": len(rows), "failed": failed,
			"partialSuccess": len(rows) > 0 && (failed > 0 || stopped), "stopped": stopped,
			"notProcessed": len(req.Calls) - len(results),
		},
		"results": results,
	}
	body := map[string]any{"data": data, "message": msg}
	if status == http.StatusBadRequest {
		body["error"] = map[string]any{"message": msg, "code": status}
	}
	writeJSON(w, status, body)
	return nil
}

// callErrField is the field of a dial.FieldError, "" otherwise.
func callErrField(err error) string {
	var fe *dial.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// callPlanError words a planning failure of one item.
func callPlanError(err error) string {
	if errors.Is(err, dial.ErrNoWindow) {
		return "no allowed call time: the call window never opens (check allowedDays, business hours and doNotCallBefore/After)"
	}
	return err.Error()
}

// validateCallBatchItem decodes and checks one item. The phone is returned
// (cleaned when possible) for the result even when the item fails.
func validateCallBatchItem(raw json.RawMessage, defPriority int) (callBatchValid, string, error) {
	var it callBatchItem
	var v callBatchValid
	if err := decodeBytes(raw, &it); err != nil {
		var e *Error
		if errors.As(err, &e) && strings.HasPrefix(e.Message, "request body must be") {
			return v, "", errors.New("must be an object")
		}
		return v, "", errors.New(toError(err).Message)
	}
	phone := ""
	if it.ContactPhone != nil {
		phone = cleanPhone(*it.ContactPhone)
	}
	var err error
	if v.phone, err = checkCallPhone("contactPhone", it.ContactPhone); err != nil {
		return v, phone, errors.New(toError(err).Message)
	}
	fail := func(err error) (callBatchValid, string, error) { return v, phone, errors.New(toError(err).Message) }
	if v.name, err = checkCallName("contactName", it.ContactName); err != nil {
		return fail(err)
	}
	if v.email, err = checkCallEmail("contactEmail", it.ContactEmail); err != nil {
		return fail(err)
	}
	at, err := checkCallTime("scheduledAt", it.ScheduledAt)
	if err != nil {
		return fail(err)
	}
	if v.priority, err = checkCallPriority("priority", it.Priority, defPriority); err != nil {
		return fail(err)
	}
	if it.CallMetadata != nil {
		v.callMeta = cleanCallValue(it.CallMetadata).(map[string]any)
		if err := checkCallMetadata("callMetadata", v.callMeta); err != nil {
			return fail(err)
		}
	}
	if it.Metadata != nil {
		v.meta = cleanCallValue(it.Metadata).(map[string]any)
	}
	tz := cleanCallOpt(it.Timezone)
	if tz != "" {
		if _, err := dial.LoadZone(tz); err != nil {
			return fail(badRequest("timezone must be an IANA time zone such as America/New_York"))
		}
	}
	lst := cleanCallOpt(it.LocalScheduleTime)
	if lst != "" {
		if _, err := dial.ParseHHMM(lst); err != nil {
			return fail(badRequest("localScheduleTime must be HH:mm (00:00 to 23:59)"))
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

// sortCallResults orders results by index.
func sortCallResults(rs []callBatchResult) {
	slices.SortFunc(rs, func(a, b callBatchResult) int { return a.Index - b.Index })
}
