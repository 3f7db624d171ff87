package calls

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/clean"
	"github.com/agentd/agentd/storage/callstore"
)

// ListOptions are the filters, order and page of a call list
// (DECISIONS.md "Calls").
type ListOptions struct {
	Statuses    []string
	AgentID     string
	Direction   string
	PhoneNumber string
	BatchID     string // the dashboard's batch filter (not a query parameter of the API)
	From, To    *time.Time
	SortBy      string // createdAt (default), scheduledAt, priority
	SortOrder   string // asc or desc (default)
	Limit       int    // default 50, max 100
	Offset      int
}

// Page is one page of calls.
type Page struct {
	Calls      []Record   `json:"calls"`
	Pagination Pagination `json:"pagination"`
}

// Pagination says where the page is; total is the true total.
type Pagination struct {
	Total   int  `json:"total"`
	Limit   int  `json:"limit"`
	Offset  int  `json:"offset"`
	HasMore bool `json:"hasMore"`
}

var statusNames = map[string]bool{
	"initiated": true, "queued": true, "scheduled": true, "connecting": true, "ringing": true, "active": true,
	"completed": true, "failed": true, "cancelled": true, "no_answer": true, "busy": true,
}

// Validate checks the options and applies defaults; errors are bad input.
func (o *ListOptions) Validate() error {
	for _, s := range o.Statuses {
		if !statusNames[s] {
			return invalid("status", "status "+strconv.Quote(s)+" is not a call status (initiated, queued, scheduled, connecting, ringing, active, completed, failed, cancelled, no_answer, busy)")
		}
	}
	if o.Direction != "" && o.Direction != "inbound" && o.Direction != "outbound" && o.Direction != "web" {
		return invalid("direction", "direction must be inbound, outbound or web")
	}
	if o.PhoneNumber != "" {
		p := clean.Phone(o.PhoneNumber)
		if !clean.IsE164(p) {
			return invalid("phoneNumber", "phoneNumber "+msgE164)
		}
		o.PhoneNumber = p
	}
	switch o.SortBy {
	case "":
		o.SortBy = "createdAt"
	case "createdAt", "scheduledAt", "priority":
	default:
		return invalid("sortBy", "sortBy must be createdAt, scheduledAt or priority")
	}
	switch strings.ToLower(o.SortOrder) {
	case "":
		o.SortOrder = "desc"
	case "asc", "desc":
		o.SortOrder = strings.ToLower(o.SortOrder)
	default:
		return invalid("sortOrder", "sortOrder must be asc or desc")
	}
	if err := clean.CheckPage(&o.Limit, o.Offset, 100); err != nil {
		return err
	}
	if o.From != nil && o.To != nil && o.To.Before(*o.From) {
		return invalid("to", "to must not be before from")
	}
	return nil
}

// List lists the organization's calls.
func (s *Service) List(ctx context.Context, orgID string, o ListOptions) (Page, error) {
	if err := o.Validate(); err != nil {
		return Page{}, err
	}
	calls, total, err := s.db.Calls.ListCalls(ctx, callstore.CallFilter{OrgID: orgID, Statuses: o.Statuses, AgentID: o.AgentID,
		Direction: o.Direction, PhoneNumber: o.PhoneNumber, BatchID: o.BatchID, From: o.From, To: o.To, SortBy: o.SortBy,
		Desc: o.SortOrder == "desc", Limit: o.Limit, Offset: o.Offset})
	if err != nil {
		return Page{}, err
	}
	page := Page{Calls: make([]Record, len(calls)),
		Pagination: Pagination{Total: total, Limit: o.Limit, Offset: o.Offset, HasMore: o.Offset+len(calls) < total}}
	for i, c := range calls {
		page.Calls[i] = record(c)
	}
	return page, nil
}

// ListQuery lists the organization's calls by the options of a query
// string (GET /api/v1/calls).
func (s *Service) ListQuery(ctx context.Context, orgID string, q url.Values) (Page, error) {
	o, err := ParseListQuery(q)
	if err != nil {
		return Page{}, err
	}
	return s.List(ctx, orgID, o)
}

// ParseListQuery reads the list options from a query string: status may
// repeat or hold a comma-separated list; times are ISO 8601 with offset.
func ParseListQuery(q url.Values) (ListOptions, error) {
	var o ListOptions
	for _, v := range q["status"] {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				o.Statuses = append(o.Statuses, s)
			}
		}
	}
	o.AgentID = clean.String(q.Get("agentId"))
	o.Direction = clean.String(q.Get("direction"))
	o.PhoneNumber = clean.String(q.Get("phoneNumber"))
	o.BatchID = clean.String(q.Get("batchId"))
	o.SortBy = clean.String(q.Get("sortBy"))
	o.SortOrder = clean.String(q.Get("sortOrder"))
	for _, f := range []struct {
		name string
		dst  **time.Time
	}{{"from", &o.From}, {"to", &o.To}} {
		if v := clean.String(q.Get(f.name)); v != "" {
			t, ok := parseTime(v)
			if !ok {
				return o, invalid(f.name, f.name+" must be an ISO 8601 date-time with offset, e.g. 2026-06-10T14:00:00Z")
			}
			*f.dst = &t
		}
	}
	if err := clean.Page(q, &o.Limit, &o.Offset, 100); err != nil {
		return o, err
	}
	return o, nil
}
