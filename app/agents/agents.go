// Package agents owns the rules of agents, the workforce view and jobs:
// their inputs, validation (errors with a kind and the field's path), views
// and use cases over storage. The HTTP handlers in app and the CLI in cmd
// both call it, so an agent is checked the same way whichever door it
// comes through.
package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Paging of the v1 agent list.
const (
	defaultLimit = 50
	maxLimit     = 100
)

// Query selects a page of the v1 agent list.
type Query struct {
	Type   string // voice, chat or "" for both
	Status string // an agent status or "" for any
	Limit  int    // 1-100
	Offset int    // >= 0
}

// ParseQuery reads type, status, limit and offset from a query string.
// Invalid values are refused (Invalid), never clamped, so a client bug shows
// at once; an empty value counts as absent.
func ParseQuery(v url.Values) (Query, error) {
	q := Query{Type: v.Get("type"), Status: v.Get("status"), Limit: defaultLimit}
	if q.Type != "" && !slices.Contains(agentTypes, q.Type) {
		return q, invalidf("type", "must be voice or chat, got %q", q.Type)
	}
	if q.Status != "" && !slices.Contains(agentStatuses, q.Status) {
		return q, invalidf("status", "must be one of active, inactive, training, deployed, got %q", q.Status)
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxLimit {
			return q, invalidf("limit", "must be an integer from 1 to %d, got %q", maxLimit, s)
		}
		q.Limit = n
	}
	if s := v.Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return q, invalidf("offset", "must be an integer >= 0, got %q", s)
		}
		q.Offset = n
	}
	return q, nil
}

// List returns one page of the organization's agents, newest first, and
// whether another page follows. A zero Limit is the default page size.
func (s *Service) List(ctx context.Context, orgID string, q Query) ([]agentstore.Agent, bool, error) {
	if q.Limit == 0 {
		q.Limit = defaultLimit
	}
	if q.Limit < 1 || q.Limit > maxLimit || q.Offset < 0 {
		return nil, false, errs.Invalidf("limit must be 1 to %d and offset >= 0", maxLimit)
	}
	as, more, err := s.db.Agents.ListAgents(ctx, orgID, agentstore.AgentFilter{Type: q.Type, Status: q.Status, Limit: q.Limit, Offset: q.Offset})
	for i := range as {
		as[i].Tools = MaskTools(as[i].Tools)
	}
	return as, more, err
}

// PickLimit is the most agents a dashboard picker lists.
const PickLimit = 200

// Pick lists up to PickLimit of the organization's agents, newest first,
// for the dashboard's pickers (a select of agents, not a paged list).
func (s *Service) Pick(ctx context.Context, orgID string) ([]Agent, error) {
	as, _, err := s.db.Agents.ListAgents(ctx, orgID, agentstore.AgentFilter{Limit: PickLimit})
	for i := range as {
		as[i].Tools = MaskTools(as[i].Tools)
	}
	return as, err
}

// Get reads an agent of the organization; any other is "agent not found".
func (s *Service) Get(ctx context.Context, orgID, id string) (agentstore.Agent, error) {
	a, err := s.db.Agents.GetAgent(ctx, orgID, id)
	a.Tools = MaskTools(a.Tools)
	return a, agentErr(err)
}

// Create validates a new agent (type and name required, status default
// active) and stores it.
func (s *Service) Create(ctx context.Context, orgID string, in Input) (agentstore.Agent, error) {
	return s.CreateWith(ctx, orgID, in, nil)
}

// CreateWith is Create writing also (the agent's analysis plan) in the
// agent's own transaction: if also fails, no agent is stored.
func (s *Service) CreateWith(ctx context.Context, orgID string, in Input, also agentstore.Also) (agentstore.Agent, error) {
	a := agentstore.Agent{OrgID: orgID, Status: "active"}
	in.apply(&a)
	if err := validate(&a); err != nil {
		return agentstore.Agent{}, err
	}
	if err := s.checkCollections(ctx, orgID, a.Knowledge); err != nil {
		return agentstore.Agent{}, err
	}
	plain := a.Tools
	sealed, err := sealTools(s.db.Secrets, plain, nil)
	if err != nil {
		return agentstore.Agent{}, err
	}
	a.Tools = sealed
	a, err = s.db.Agents.CreateAgentWith(ctx, a, also)
	a.Tools = plain // header values shown this once
	return a, agentErr(err)
}

// Update applies the present fields of in to the agent and validates the
// result as a whole (a type change must suit the config and phone numbers
// it keeps), in one transaction.
func (s *Service) Update(ctx context.Context, orgID, id string, in Input) (agentstore.Agent, error) {
	return s.UpdateWith(ctx, orgID, id, in, nil)
}

// UpdateWith is Update writing also (the agent's analysis plan) in the
// same transaction: if also fails, the agent is left as it was.
func (s *Service) UpdateWith(ctx context.Context, orgID, id string, in Input, also agentstore.Also) (agentstore.Agent, error) {
	if present(in.Knowledge) {
		k, err := validateKnowledge(in.Knowledge)
		if err != nil {
			return agentstore.Agent{}, err
		}
		if err := s.checkCollections(ctx, orgID, k); err != nil {
			return agentstore.Agent{}, err
		}
	}
	var plain json.RawMessage
	a, err := s.db.Agents.UpdateAgentWith(ctx, orgID, id, func(a *agentstore.Agent) error {
		prev := a.Tools
		in.apply(a)
		if err := validate(a); err != nil || !present(in.Tools) {
			return err
		}
		// New tools: header values sealed, a masked one keeps the stored.
		plain = a.Tools
		sealed, err := sealTools(s.db.Secrets, plain, prev)
		a.Tools = sealed
		return err
	}, also)
	if plain != nil {
		a.Tools = plain // the values given shown this once
	} else {
		a.Tools = MaskTools(a.Tools)
	}
	return a, agentErr(err)
}

// Delete sets the agent inactive: it stays listed and its calls and jobs
// are kept (DECISIONS.md). Deleting an inactive agent is a no-op.
func (s *Service) Delete(ctx context.Context, orgID, id string) (agentstore.Agent, error) {
	a, err := s.db.Agents.UpdateAgent(ctx, orgID, id, func(a *agentstore.Agent) error {
		a.Status = "inactive"
		return nil
	})
	a.Tools = MaskTools(a.Tools)
	return a, agentErr(err)
}

// agentErr gives storage's not-found the agent family's message, and a
// number another organization holds a conflict naming the number.
func agentErr(err error) error {
	var taken *agentstore.PhoneTakenError
	switch {
	case errors.Is(err, sqldb.ErrNotFound):
		return errs.Wrap(errs.NotFound, "agent not found", err)
	case errors.As(err, &taken):
		return errs.Wrap(errs.Conflict, "phoneNumbers: "+taken.Error(), err)
	}
	return err
}

// invalidf is bad input in the field at path; the message reads
// "path: <formatted>", as clients have always seen it.
func invalidf(path, format string, args ...any) *errs.Error {
	return errs.InvalidField(path, fmt.Sprintf(format, args...))
}
