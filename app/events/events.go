// Package events is the event log and client webhooks: the catalogue of
// event types, the views events carry, webhook endpoints with their
// validation and secrets, Standard Webhooks signing, and the delivery
// worker. Storage writes events in the transaction of the change they
// report (a transactional outbox); this package renders, lists, streams and
// delivers them. It has no HTTP of its own: the package app serves it, and
// deliveries go out through a Sender (internal/safehttp in production).
package events

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/eventstore"
	"github.com/agentd/agentd/storage/hookstore"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/listingstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// TypeInfo is one entry of the event catalogue.
type TypeInfo struct {
	Type        string `json:"type"`
	Description string `json:"description"`
}

// Catalogue lists every event type endpoints can subscribe to, in the order
// the README documents them. ping is not here: it goes only to the endpoint
// tested, whatever it subscribed to.
var Catalogue = []TypeInfo{
	{callstore.EventCallQueued, "a call is queued for dialling (outbound, or a scheduled call fell due)"},
	{callstore.EventCallRinging, "the callee's phone is ringing"},
	{callstore.EventCallAnswered, "the callee answered (status active)"},
	{callstore.EventCallRetryScheduled, "an attempt ended busy, unanswered or failed and another is due at nextAttemptAt"},
	{callstore.EventCallEnded, "the call is final: completed, failed, busy, no_answer or cancelled, with duration, failure_reason, attempts and summary"},
	{callstore.EventCallResult, "the voice agent posted its summary, transcript or outcome"},
	{callstore.EventCallTranscript, "a line of a call's transcript as agentd's own voice loop heard it, live ({callId, agentId, role, text, at, interrupted}); sent only to endpoints that list it, not to \"*\""},
	{callstore.EventCallTransferred, "agentd's voice loop handed the call to a person (transfer_call: REFER, or a second leg it bridges); the call with its transfers"},
	{callstore.EventCallTransferFailed, "a transfer_call attempt failed (no answer, busy, a machine, refused); the agent went back to the caller"},
	{kbstore.EventKBSourceCompleted, "a knowledge source was chunked and embedded"},
	{kbstore.EventKBSourceFailed, "processing a knowledge source failed (error says why)"},
	{listingstore.EventListingsSynced, "a listings sync was written"},
	{callstore.EventBatchCompleted, "every call of a batch is final"},
	{convstore.EventStarted, "a conversation started (conversation API, OpenAI-compatible endpoint with x-agentd-call-id, widget)"},
	{convstore.EventEnded, "a conversation ended, with its transcript (messages with citations, tool calls and usage)"},
	{analysis.EventCallAnalyzed, "a call's analysis finished: completed, failed (with the validation errors) or skipped (with the reason)"},
	{analysis.EventConversationAnalyzed, "a conversation's analysis finished: completed, failed or skipped"},
}

// knownType reports whether t is in the catalogue.
func knownType(t string) bool {
	for _, c := range Catalogue {
		if c.Type == t {
			return true
		}
	}
	return false
}

// Event is an event as the API and every webhook body show it.
type Event struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	CreatedAt      string          `json:"createdAt"`
	OrganizationID string          `json:"organizationId"`
	Data           json.RawMessage `json:"data"`
}

// timeLayout is the API's timestamp: RFC 3339, UTC, milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func timePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := formatTime(*t)
	return &s
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// view shapes a stored event.
func view(e sqldb.Event) Event {
	return Event{ID: e.ID, Type: e.Type, CreatedAt: formatTime(e.CreatedAt), OrganizationID: e.OrgID, Data: Render(e)}
}

// Body is the exact bytes a webhook delivery (and an SSE data line)
// carries: {id, type, createdAt, organizationId, data}. It is built the
// same way on every attempt, so a signature covers the same bytes.
func Body(e sqldb.Event) []byte {
	data := Render(e)
	b := make([]byte, 0, len(data)+160)
	b = append(b, `{"id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"type":`...)
	b = appendString(b, e.Type)
	b = append(b, `,"createdAt":"`...)
	b = e.CreatedAt.UTC().AppendFormat(b, timeLayout)
	b = append(b, `","organizationId":`...)
	b = appendString(b, e.OrgID)
	b = append(b, `,"data":`...)
	if len(data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, data...)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string: ids and types are plain ASCII
// and are copied; anything else goes through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			j, _ := json.Marshal(s)
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Page limits of GET /api/v2/events.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Query is a pull of the log: events after a cursor (an event id; ""
// means from the oldest kept), of some types, oldest first.
type Query struct {
	After string
	Types []string
	Limit int
}

// Page is one page of the log. NextCursor is the last event's id (or the
// given cursor when the page is empty): pass it as after to continue.
type Page struct {
	Events     []Event `json:"events"`
	NextCursor *string `json:"nextCursor"`
	HasMore    bool    `json:"hasMore"`
}

// ParseTypes splits a type filter ("call.ended,call.result", repeatable)
// and checks every type.
func ParseTypes(vals []string) ([]string, error) {
	var out []string
	for _, v := range vals {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				continue
			}
			if !knownType(t) && t != hookstore.EventPing {
				return nil, errs.InvalidField("type", strconv.Quote(t)+" is not an event type (see the event catalogue)")
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// resolveCursor turns an event id into its place in the log; "" is the
// start.
func (s *Service) resolveCursor(ctx context.Context, orgID, after string) (sqldb.Pos, error) {
	if after == "" {
		return sqldb.Pos{}, nil
	}
	pos, err := s.DB.Events.EventPos(ctx, orgID, after)
	if errors.Is(err, sqldb.ErrNotFound) {
		return pos, errs.InvalidField("after", "no event "+strconv.Quote(after)+" in this organization's log")
	}
	return pos, err
}

// ListEvents pulls one page of the organization's log.
func (s *Service) ListEvents(ctx context.Context, orgID string, q Query) (Page, error) {
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 1 || q.Limit > MaxLimit:
		return Page{}, errs.InvalidField("limit", "must be from 1 to "+strconv.Itoa(MaxLimit))
	}
	pos, err := s.resolveCursor(ctx, orgID, q.After)
	if err != nil {
		return Page{}, err
	}
	evs, err := s.DB.Events.ListEvents(ctx, eventstore.EventFilter{OrgID: orgID, After: pos, Types: q.Types, Limit: q.Limit + 1})
	if err != nil {
		return Page{}, err
	}
	p := Page{Events: []Event{}, HasMore: len(evs) > q.Limit}
	if p.HasMore {
		evs = evs[:q.Limit]
	}
	for _, e := range evs {
		p.Events = append(p.Events, view(e))
	}
	switch {
	case len(evs) > 0:
		p.NextCursor = &evs[len(evs)-1].ID
	case q.After != "":
		p.NextCursor = &q.After
	}
	return p, nil
}
