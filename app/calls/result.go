package calls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/clean"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Limits of a call result. The HTTP body limit (ResultBodyLimit) is above
// the 1 MiB default because a long call's transcript is big.
const (
	ResultBodyLimit     = 4 << 20
	resultMaxSummary    = 20000 // characters
	resultMaxTranscript = 2000  // items
	resultMaxText       = 20000 // characters per transcript item
)

var outcomeRE = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

var transcriptRoles = map[string]bool{"agent": true, "user": true, "system": true, "tool": true}

// ResultRequest is the body of POST /api/v1/calls/{id}/result: each given
// field replaces the stored one.
type ResultRequest struct {
	Summary    *string            `json:"summary"`
	Transcript *[]TranscriptInput `json:"transcript"`
	Outcome    *string            `json:"outcome"`
	Metadata   *map[string]any    `json:"metadata"`
	// OptOut: the person asked not to be called again; the number goes on
	// the organization's do-not-call list at once.
	OptOut *bool `json:"optOut"`
}

// TranscriptInput is one transcript turn as sent; every field is required.
type TranscriptInput struct {
	Role *string `json:"role"`
	Text *string `json:"text"`
	At   *string `json:"at"`
}

// TranscriptItem is one turn of a call's transcript.
type TranscriptItem struct {
	Role string `json:"role"` // agent, user, system or tool
	Text string `json:"text"`
	At   string `json:"at"` // RFC 3339, UTC with milliseconds as stored
	// Interrupted: the caller cut the agent off (agentd's voice loop).
	Interrupted bool `json:"interrupted,omitempty"`
}

// ResultView is what the voice agent reported about a call, shown on
// GET /api/v1/calls/{id} (embedded in Record; absent from lists).
type ResultView struct {
	Transcript      json.RawMessage `json:"transcript"`      // [TranscriptItem] or null
	Outcome         *string         `json:"outcome"`         // label or null
	ResultUpdatedAt *string         `json:"resultUpdatedAt"` // last POST .../result, or null
}

// parseResult validates a result into what storage saves. Strings are
// cleaned like every call endpoint's (DECISIONS.md "Calls").
func parseResult(req ResultRequest, callID string) (callstore.CallResult, error) {
	out := callstore.CallResult{CallID: callID}
	if req.Summary == nil && req.Transcript == nil && req.Outcome == nil && req.Metadata == nil && req.OptOut == nil {
		return out, errs.New(errs.Invalid, "nothing to record: give summary, transcript, outcome, metadata or optOut")
	}
	if req.Summary != nil {
		s := clean.String(*req.Summary)
		switch n := utf8.RuneCountInString(s); {
		case n == 0:
			return out, invalid("summary", "summary must not be empty (leave it out to keep the stored one)")
		case n > resultMaxSummary:
			return out, invalid("summary", fmt.Sprintf("summary is too long (%d characters, max %d)", n, resultMaxSummary))
		}
		out.Summary = &s
	}
	if req.Transcript != nil {
		items, err := parseTranscript(*req.Transcript)
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
		o := clean.String(*req.Outcome)
		if !outcomeRE.MatchString(o) {
			return out, invalid("outcome", "outcome must be a label of 1 to 64 characters a-z, 0-9, _ or -, e.g. appointment_booked")
		}
		out.Outcome = &o
	}
	if req.Metadata != nil && *req.Metadata != nil {
		b, err := json.Marshal(cleanValue(*req.Metadata))
		if err != nil {
			return out, invalid("metadata", "metadata: "+err.Error())
		}
		out.Metadata = b
	}
	return out, nil
}

func parseTranscript(in []TranscriptInput) ([]TranscriptItem, error) {
	if len(in) > resultMaxTranscript {
		return nil, invalid("transcript", fmt.Sprintf("transcript has %d items, max %d", len(in), resultMaxTranscript))
	}
	items := make([]TranscriptItem, len(in))
	for i, t := range in {
		path := fmt.Sprintf("transcript[%d]", i)
		if t.Role == nil || !transcriptRoles[clean.String(*t.Role)] {
			return nil, invalid(path+".role", path+".role must be agent, user, system or tool")
		}
		if t.Text == nil {
			return nil, invalid(path+".text", path+".text is required")
		}
		text := clean.String(*t.Text)
		if n := utf8.RuneCountInString(text); n > resultMaxText {
			return nil, invalid(path+".text", fmt.Sprintf("%s.text is too long (%d characters, max %d)", path, n, resultMaxText))
		}
		if t.At == nil {
			return nil, invalid(path+".at", path+".at is required (RFC 3339 date-time)")
		}
		at, err := time.Parse(time.RFC3339Nano, clean.String(*t.At))
		if err != nil {
			return nil, invalid(path+".at", path+".at must be an RFC 3339 date-time, e.g. 2026-06-10T14:00:05Z")
		}
		items[i] = TranscriptItem{Role: clean.String(*t.Role), Text: text, At: formatTime(at)}
	}
	return items, nil
}

// RecordResult records what the voice agent in the call's room reports:
// summary, transcript, outcome and metadata. Each given field replaces the
// stored one (metadata is merged into metadata.result). It returns the
// call and the client message.
//
// An outcome "voicemail" makes the attempt a voicemail: retried when the
// call's retryConfig says so (retryOnVoicemail, default true), by the dial
// queue when the call is still live, here when it has already ended. With
// optOut true the called number goes on the do-not-call list at once (its
// waiting calls fail with do_not_call).
func (s *Service) RecordResult(ctx context.Context, orgID, id string, req ResultRequest) (Record, string, error) {
	res, err := parseResult(req, id)
	if err != nil {
		return Record{}, "", err
	}
	now := s.now()
	if res.Summary != nil || res.Transcript != nil || res.Outcome != nil || res.Metadata != nil {
		err = s.db.Calls.SaveCallResult(ctx, orgID, res, now)
	} else {
		err = s.checkDialled(ctx, orgID, id)
	}
	switch {
	case errors.Is(err, sqldb.ErrNotFound):
		return Record{}, "", errCallNotFound(err)
	case errors.Is(err, callstore.ErrCallNotDialled):
		return Record{}, "", &errs.Error{Kind: errs.Conflict, Message: "call has not been dialled yet: a result needs an attempt", Err: err}
	case err != nil:
		return Record{}, "", err
	}
	msg := "Call result recorded"
	c, err := s.db.Calls.GetCall(ctx, orgID, id)
	if err != nil {
		return Record{}, "", err
	}
	if res.Outcome != nil && *res.Outcome == dial.OutcomeVoicemail && c.Status == callstore.CallCompleted {
		m, err := s.voicemailEnded(ctx, c, now)
		if err != nil {
			return Record{}, "", err
		}
		msg += m
	}
	if req.OptOut != nil && *req.OptOut { // after a voicemail retry: it fails that too
		if _, _, err := s.db.Calls.AddDNC(ctx, orgID, []string{c.PhoneNumber}, "opted out on call "+id, now); err != nil {
			return Record{}, "", err
		}
		msg += "; the number is now on the do-not-call list"
	}
	rec, err := s.Get(ctx, orgID, id)
	if err != nil {
		return Record{}, "", err
	}
	return rec, msg, nil
}

// voicemailEnded applies a voicemail reported after the attempt ended
// completed: recorded as voicemail, and retried when the policy says so.
func (s *Service) voicemailEnded(ctx context.Context, c callstore.Call, now time.Time) (string, error) {
	h, err := s.orgHours(ctx, c.OrgID)
	if err != nil {
		return "", err
	}
	ended := now
	if c.EndedAt != nil {
		ended = *c.EndedAt
	}
	retryAt, err := dial.RetryTime(c, dial.OutcomeVoicemail, ended, h)
	if err != nil {
		retryAt = nil // no allowed time left: the call stays completed
	}
	done, err := s.db.Calls.SettleVoicemail(ctx, c.ID, c.Attempts, retryAt, now)
	if err != nil || !done {
		return "", err
	}
	if retryAt != nil {
		s.sched.Wake()
		return "; voicemail: the call is retried at " + formatTime(*retryAt), nil
	}
	return "; voicemail recorded", nil
}

// checkDialled is SaveCallResult's check alone: the organization's call,
// dialled at least once.
func (s *Service) checkDialled(ctx context.Context, orgID, id string) error {
	c, err := s.db.Calls.GetCall(ctx, orgID, id)
	if err != nil {
		return err
	}
	if c.Attempts == 0 {
		return fmt.Errorf("call %q: %w", id, callstore.ErrCallNotDialled)
	}
	return nil
}
