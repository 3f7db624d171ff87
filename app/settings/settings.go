// Package settings holds an organization's settings: for now its calling
// hours (dial.CallingHours), read by the calls feature when it schedules
// and by the dial queue when it dials.
package settings

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/internal/clean"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/callstore"
)

// Settings are an organization's settings as the API shows them.
type Settings struct {
	CallingHours CallingHours `json:"callingHours"`
	// EnforceV1Roles makes /v1 apply the key's role capabilities, as /v2
	// does; off by default (the /v1 contract checks only the key).
	EnforceV1Roles bool    `json:"enforceV1Roles"`
	UpdatedAt      *string `json:"updatedAt"` // null until first saved
}

// CallingHours is the calling-hours rule (dial.CallingHours) as shown.
type CallingHours struct {
	Enabled         bool   `json:"enabled"`
	Start           string `json:"start"`
	End             string `json:"end"`
	Days            []int  `json:"days"`
	DefaultTimezone string `json:"defaultTimezone"`
}

// Patch is the body of PATCH /api/v2/organization/settings: each given
// field replaces the stored one.
type Patch struct {
	CallingHours   *HoursPatch `json:"callingHours"`
	EnforceV1Roles *bool       `json:"enforceV1Roles"`
}

// HoursPatch changes some fields of the calling hours.
type HoursPatch struct {
	Enabled         *bool   `json:"enabled"`
	Start           *string `json:"start"`
	End             *string `json:"end"`
	Days            *[]int  `json:"days"`
	DefaultTimezone *string `json:"defaultTimezone"`
}

func view(h dial.CallingHours, enforce bool, updated time.Time) Settings {
	s := Settings{EnforceV1Roles: enforce, CallingHours: CallingHours{Enabled: h.Enabled, Start: h.Start, End: h.End, Days: h.Days,
		DefaultTimezone: h.DefaultTimezone}}
	if s.CallingHours.Days == nil {
		s.CallingHours.Days = []int{}
	}
	if !updated.IsZero() {
		u := apitime.Format(updated)
		s.UpdatedAt = &u
	}
	return s
}

// Get reads the organization's settings (the defaults when never saved:
// calling hours off, 08:00-21:00 every day, UTC).
func (s *Service) Get(ctx context.Context, orgID string) (Settings, error) {
	h, st, err := s.load(ctx, orgID)
	if err != nil {
		return Settings{}, err
	}
	return view(h, st.EnforceV1Roles, st.UpdatedAt), nil
}

// load reads the stored settings and parses their calling hours.
func (s *Service) load(ctx context.Context, orgID string) (dial.CallingHours, callstore.OrgSettings, error) {
	st, err := s.db.Calls.GetOrgSettings(ctx, orgID)
	if err != nil {
		return dial.CallingHours{}, st, err
	}
	h, err := dial.ParseCallingHours(st.CallingHours)
	return h, st, err
}

// Update applies a patch and saves the whole result; the first invalid
// field is bad input named by its path (callingHours.start).
func (s *Service) Update(ctx context.Context, orgID string, p Patch, now time.Time) (Settings, error) {
	h, st, err := s.load(ctx, orgID)
	if err != nil {
		return Settings{}, err
	}
	if p.CallingHours == nil && p.EnforceV1Roles == nil {
		return Settings{}, &errs.Error{Kind: errs.Invalid, Field: "callingHours", Message: "nothing to change: give callingHours or enforceV1Roles"}
	}
	if p.EnforceV1Roles != nil {
		st.EnforceV1Roles = *p.EnforceV1Roles
	}
	c := p.CallingHours
	if c == nil {
		c = &HoursPatch{}
	}
	if c.Enabled != nil {
		h.Enabled = *c.Enabled
	}
	if c.Start != nil {
		h.Start = clean.String(*c.Start)
	}
	if c.End != nil {
		h.End = clean.String(*c.End)
	}
	if c.Days != nil {
		h.Days = *c.Days
	}
	if c.DefaultTimezone != nil {
		h.DefaultTimezone = clean.String(*c.DefaultTimezone)
	}
	h.Normalize()
	if err := h.Validate(); err != nil {
		field, msg := "callingHours", err.Error()
		if fe, ok := err.(*dial.FieldError); ok {
			field, msg = "callingHours."+fe.Field, fe.Msg
		}
		return Settings{}, &errs.Error{Kind: errs.Invalid, Field: field, Message: field + ": " + msg}
	}
	raw, err := json.Marshal(h)
	if err != nil {
		return Settings{}, err
	}
	if err := s.db.Calls.SaveOrgSettings(ctx, orgID, callstore.OrgSettings{CallingHours: raw, EnforceV1Roles: st.EnforceV1Roles}, now); err != nil {
		return Settings{}, err
	}
	return view(h, st.EnforceV1Roles, now), nil
}

// Deps are the stores the settings feature uses.
type Deps struct {
	Calls *callstore.Calls // the organization's settings live with its calls
}

// Service is the organization settings feature: the HTTP handlers in app,
// the dashboard and the CLI call the same methods.
type Service struct{ db Deps }

// New returns the settings feature over its stores.
func New(d Deps) *Service { return &Service{db: d} }
