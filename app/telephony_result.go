package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage"
)

// Limits of POST /api/v1/calls/{id}/result. The body limit is above the
// 1 MiB default because a long call's transcript is big.
const (
	callResultBodyLimit     = 4 << 20
	callResultMaxSummary    = 20000 // characters
	callResultMaxTranscript = 2000  // items
	callResultMaxText       = 20000 // characters per transcript item
)

var callOutcomeRE = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

var callTranscriptRoles = map[string]bool{"agent": true, "user": true, "system": true, "tool": true}

// callResultRequest is the body of POST /api/v1/calls/{id}/result.
type callResultRequest struct {
	Summary    *string                `json:"summary"`
	Transcript *[]callTranscriptInput `json:"transcript"`
	Outcome    *string                `json:"outcome"`
	Metadata   *map[string]any        `json:"metadata"`
}

type callTranscriptInput struct {
	Role *string `json:"role"`
	Text *string `json:"text"`
	At   *string `json:"at"`
}

// CallTranscriptItem is one turn of a call's transcript.
type CallTranscriptItem struct {
	Role string `json:"role"` // agent, user, system or tool
	Text string `json:"text"`
	At   string `json:"at"` // RFC 3339, UTC with milliseconds as stored
}

// CallResultView is what the voice agent reported about a call, shown on
// GET /api/v1/calls/{id} (embedded in CallRecord; absent from lists).
type CallResultView struct {
	Transcript      json.RawMessage `json:"transcript"`      // [CallTranscriptItem] or null
	Outcome         *string         `json:"outcome"`         // label or null
	ResultUpdatedAt *string         `json:"resultUpdatedAt"` // last POST .../result, or null
}

// parseCallResult validates the body into what storage saves. Strings are
// cleaned like every call endpoint's (DECISIONS.md "Calls").
func parseCallResult(req callResultRequest, callID string) (storage.CallResult, error) {
	out := storage.CallResult{CallID: callID}
	if req.Summary == nil && req.Transcript == nil && req.Outcome == nil && req.Metadata == nil {
		return out, badRequest("nothing to record: give summary, transcript, outcome or metadata")
	}
	if req.Summary != nil {
		s := cleanString(*req.Summary)
		switch n := utf8.RuneCountInString(s); {
		case n == 0:
			return out, badRequest("summary must not be empty (leave it out to keep the stored one)")
		case n > callResultMaxSummary:
			return out, badRequest(fmt.Sprintf("summary is too long (%d characters, max %d)", n, callResultMaxSummary))
		}
		out.Summary = &s
	}
	if req.Transcript != nil {
		items, err := parseCallTranscript(*req.Transcript)
		if err != nil {
			return out, err
		}
		b, err := json.Marshal(items)
		if err != nil {
			return out, err
		}
		out.Transcript = b
	}
	if req.Outcome != nil {
		o := cleanString(*req.Outcome)
		if !callOutcomeRE.MatchString(o) {
			return out, badRequest("outcome must be a label of 1 to 64 characters a-z, 0-9, _ or -, e.g. appointment_booked")
		}
		out.Outcome = &o
	}
	if req.Metadata != nil && *req.Metadata != nil {
		b, err := json.Marshal(cleanCallValue(*req.Metadata))
		if err != nil {
			return out, badRequest("metadata: " + err.Error())
		}
		out.Metadata = b
	}
	return out, nil
}

func parseCallTranscript(in []callTranscriptInput) ([]CallTranscriptItem, error) {
	if len(in) > callResultMaxTranscript {
		return nil, badRequest(fmt.Sprintf("transcript has %d items, max %d", len(in), callResultMaxTranscript))
	}
	items := make([]CallTranscriptItem, len(in))
	for i, t := range in {
		path := fmt.Sprintf("transcript[%d]", i)
		if t.Role == nil || !callTranscriptRoles[cleanString(*t.Role)] {
			return nil, badRequest(path + ".role must be agent, user, system or tool")
		}
		if t.Text == nil {
			return nil, badRequest(path + ".text is required")
		}
		text := cleanString(*t.Text)
		if n := utf8.RuneCountInString(text); n > callResultMaxText {
			return nil, badRequest(fmt.Sprintf("%s.text is too long (%d characters, max %d)", path, n, callResultMaxText))
		}
		if t.At == nil {
			return nil, badRequest(path + ".at is required (RFC 3339 date-time)")
		}
		at, err := time.Parse(time.RFC3339Nano, cleanString(*t.At))
		if err != nil {
			return nil, badRequest(path + ".at must be an RFC 3339 date-time, e.g. 2026-06-10T14:00:05Z")
		}
		items[i] = CallTranscriptItem{Role: cleanString(*t.Role), Text: text, At: formatTime(at)}
	}
	return items, nil
}

// callResult is POST /api/v1/calls/{id}/result: the voice agent in the
// call's room records its summary, transcript, outcome and metadata. Each
// given field replaces the stored one (metadata is merged into
// metadata.result); the call record is returned.
func (s *Server) callResult(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	var req callResultRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	id := p.ByName("id")
	res, err := parseCallResult(req, id)
	if err != nil {
		return err
	}
	err = s.db.SaveCallResult(r.Context(), orgID(r), res, s.now())
	switch {
	case isNotFound(err):
		return &Error{Kind: errs.NotFound, Message: "call not found", Err: err}
	case errors.Is(err, storage.ErrCallNotDialled):
		return &Error{Kind: errs.Conflict, Message: "call has not been dialled yet: a result needs an attempt", Err: err}
	case err != nil:
		return err
	}
	rec, err := GetCallRecord(r.Context(), s.db, orgID(r), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": rec, "message": "Call result recorded"})
	return nil
}

// addCallResult adds the voice agent's result to a call record read by
// GetCallRecord: transcript, outcome, and its summary over the call's (the
// dial queue rewrites the call's summary column when an attempt ends).
func addCallResult(ctx context.Context, db *storage.DB, rec *CallRecord) error {
	v := &CallResultView{Transcript: json.RawMessage("null")}
	rec.CallResultView = v
	res, err := db.GetCallResult(ctx, rec.ID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(res.Transcript) > 0 {
		v.Transcript = res.Transcript
	}
	v.Outcome = res.Outcome
	v.ResultUpdatedAt = callTimePtr(&res.UpdatedAt)
	if res.Summary != nil {
		rec.Summary = res.Summary
	}
	return nil
}
