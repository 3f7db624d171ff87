package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Agent is a voice or chat agent of an organization. Config and Tools are
// kept as the validated JSON the API accepted.
type Agent struct {
	ID           string
	OrgID        string
	Name         string
	Type         string // voice or chat
	Status       string // active, inactive, training, deployed
	Model        string
	Instructions string
	Config       json.RawMessage // object
	Tools        json.RawMessage // array of {id, name, description}
	PhoneNumbers []string
	Specialty    string
	DisplayRole  string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

const agentColumns = `id, org_id, name, type, status, model, instructions, config, tools, phone_numbers,
	specialty, display_role, created_at, updated_at`

// CreateAgent stores a new agent; ID and times are set here.
func (db *DB) CreateAgent(ctx context.Context, a Agent) (Agent, error) {
	a.ID = uuid.NewString()
	now := time.Now().UTC()
	a.CreatedAt, a.UpdatedAt = now, now
	if len(a.Config) == 0 {
		a.Config = json.RawMessage("{}")
	}
	if len(a.Tools) == 0 {
		a.Tools = json.RawMessage("[]")
	}
	phones, err := json.Marshal(nonNil(a.PhoneNumbers))
	if err != nil {
		return Agent{}, err
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO agents ("+agentColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			a.ID, a.OrgID, a.Name, a.Type, a.Status, a.Model, a.Instructions, string(a.Config), string(a.Tools),
			string(phones), a.Specialty, a.DisplayRole, ms(a.CreatedAt), ms(a.UpdatedAt))
		return err
	})
	return a, err
}

// GetAgent reads one agent of the organization; another organization's
// agent is ErrNotFound, like a missing one.
func (db *DB) GetAgent(ctx context.Context, orgID, id string) (Agent, error) {
	row := db.r.QueryRowContext(ctx, "SELECT "+agentColumns+" FROM agents WHERE id = ? AND org_id = ?", id, orgID)
	a, err := scanAgent(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fmt.Errorf("agent %q: %w", id, ErrNotFound)
	}
	return a, err
}

// GetAgentAnyOrg reads an agent by id alone, for the internal service key
// whose organization comes from the agent.
func (db *DB) GetAgentAnyOrg(ctx context.Context, id string) (Agent, error) {
	row := db.r.QueryRowContext(ctx, "SELECT "+agentColumns+" FROM agents WHERE id = ?", id)
	a, err := scanAgent(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fmt.Errorf("agent %q: %w", id, ErrNotFound)
	}
	return a, err
}

type scanner interface{ Scan(dest ...any) error }

func scanAgent(s scanner) (Agent, error) {
	var a Agent
	var config, tools, phones string
	var created, updated int64
	if err := s.Scan(&a.ID, &a.OrgID, &a.Name, &a.Type, &a.Status, &a.Model, &a.Instructions, &config, &tools,
		&phones, &a.Specialty, &a.DisplayRole, &created, &updated); err != nil {
		return Agent{}, err
	}
	a.Config, a.Tools = json.RawMessage(config), json.RawMessage(tools)
	if err := json.Unmarshal([]byte(phones), &a.PhoneNumbers); err != nil {
		return Agent{}, fmt.Errorf("agent %s phone numbers: %w", a.ID, err)
	}
	a.CreatedAt, a.UpdatedAt = fromMS(created), fromMS(updated)
	return a, nil
}

// nonNil turns a nil slice into an empty one so it stores as [] not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
