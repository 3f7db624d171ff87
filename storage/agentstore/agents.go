package agentstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
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
	// Knowledge is what the agent answers from (collections, topK,
	// listings) and Fallback its answer when nothing is relevant
	// (conversations, migration 0018); nil when never set.
	Knowledge json.RawMessage
	Fallback  *string
	CreatedAt time.Time
	UpdatedAt time.Time
}

const agentColumns = `id, org_id, name, type, status, model, instructions, config, tools, phone_numbers,
	specialty, display_role, created_at, updated_at, knowledge, fallback`

// agentOrder is newest first; rowid breaks ties between agents created in
// the same millisecond, so pages never overlap or skip.
const agentOrder = " ORDER BY created_at DESC, rowid DESC"

// Also is more writing in the transaction that creates or updates an agent,
// after the agent's row (another store's, such as its analysis plan): an
// error from it rolls the agent's write back too and is returned as is.
type Also func(ctx context.Context, tx *sql.Tx, orgID, agentID string) error

// CreateAgent stores a new agent; ID and times are set here.
func (db *Agents) CreateAgent(ctx context.Context, a Agent) (Agent, error) {
	return db.CreateAgentWith(ctx, a, nil)
}

// CreateAgentWith is CreateAgent running also (if not nil) in the same
// transaction: the agent exists only if also succeeds.
func (db *Agents) CreateAgentWith(ctx context.Context, a Agent, also Also) (Agent, error) {
	a.ID = uuid.NewString()
	now := time.Now().UTC().Truncate(time.Millisecond)
	a.CreatedAt, a.UpdatedAt = now, now
	if len(a.Config) == 0 {
		a.Config = json.RawMessage("{}")
	}
	if len(a.Tools) == 0 {
		a.Tools = json.RawMessage("[]")
	}
	a.PhoneNumbers = sqldb.NonNil(a.PhoneNumbers)
	phones, err := json.Marshal(a.PhoneNumbers)
	if err != nil {
		return Agent{}, err
	}
	err = db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO agents ("+agentColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			a.ID, a.OrgID, a.Name, a.Type, a.Status, a.Model, a.Instructions, string(a.Config), string(a.Tools),
			string(phones), a.Specialty, a.DisplayRole, sqldb.MS(a.CreatedAt), sqldb.MS(a.UpdatedAt), sqldb.NullJSON(a.Knowledge), a.Fallback)
		if err != nil {
			return err
		}
		if err := claimPhones(ctx, tx, a); err != nil {
			return err
		}
		if also != nil {
			return also(ctx, tx, a.OrgID, a.ID)
		}
		return nil
	})
	return a, err
}

// GetAgent reads one agent of the organization; another organization's
// agent is sqldb.ErrNotFound, like a missing one.
func (db *Agents) GetAgent(ctx context.Context, orgID, id string) (Agent, error) {
	row := db.r.QueryRowContext(ctx, "SELECT "+agentColumns+" FROM agents WHERE id = ? AND org_id = ?", id, orgID)
	a, err := scanAgent(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fmt.Errorf("agent %q: %w", id, sqldb.ErrNotFound)
	}
	return a, err
}

// GetAgentAnyOrg reads an agent by id alone, for the internal service key
// whose organization comes from the agent.
func (db *Agents) GetAgentAnyOrg(ctx context.Context, id string) (Agent, error) {
	row := db.r.QueryRowContext(ctx, "SELECT "+agentColumns+" FROM agents WHERE id = ?", id)
	a, err := scanAgent(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fmt.Errorf("agent %q: %w", id, sqldb.ErrNotFound)
	}
	return a, err
}

// AgentFilter selects a page of an organization's agents. Empty Type or
// Status means any; Limit must be positive.
type AgentFilter struct {
	Type   string
	Status string
	Limit  int
	Offset int
}

// ListAgents returns one page of the organization's agents, newest first,
// and whether more follow (it reads one row past the page to know).
func (db *Agents) ListAgents(ctx context.Context, orgID string, f AgentFilter) ([]Agent, bool, error) {
	if f.Limit <= 0 || f.Offset < 0 {
		return nil, false, fmt.Errorf("storage: list agents: bad page limit %d offset %d", f.Limit, f.Offset)
	}
	var where strings.Builder
	args := []any{orgID}
	where.WriteString(" WHERE org_id = ?")
	if f.Type != "" {
		where.WriteString(" AND type = ?")
		args = append(args, f.Type)
	}
	if f.Status != "" {
		where.WriteString(" AND status = ?")
		args = append(args, f.Status)
	}
	args = append(args, f.Limit+1, f.Offset)
	rows, err := db.r.QueryContext(ctx, "SELECT "+agentColumns+" FROM agents"+where.String()+agentOrder+" LIMIT ? OFFSET ?", args...)
	if err != nil {
		return nil, false, fmt.Errorf("storage: list agents: %w", err)
	}
	out, err := sqldb.Collect(rows, scanAgent)
	if err != nil {
		return nil, false, fmt.Errorf("storage: list agents: %w", err)
	}
	more := len(out) > f.Limit
	if more {
		out = out[:f.Limit]
	}
	return out, more, nil
}

// UpdateAgent reads the organization's agent, lets change edit it and
// writes the result, all in one transaction, so concurrent updates never
// lose each other's fields. An error from change aborts and is returned as
// is (validation errors reach the client unchanged). ID, OrgID and
// CreatedAt cannot change; UpdatedAt is set here.
func (db *Agents) UpdateAgent(ctx context.Context, orgID, id string, change func(*Agent) error) (Agent, error) {
	return db.UpdateAgentWith(ctx, orgID, id, change, nil)
}

// UpdateAgentWith is UpdateAgent running also (if not nil) in the same
// transaction, after the agent's row: the change is kept only if also
// succeeds.
func (db *Agents) UpdateAgentWith(ctx context.Context, orgID, id string, change func(*Agent) error, also Also) (Agent, error) {
	var a Agent
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var err error
		a, err = scanAgent(tx.QueryRowContext(ctx, "SELECT "+agentColumns+" FROM agents WHERE id = ? AND org_id = ?", id, orgID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("agent %q: %w", id, sqldb.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if err := change(&a); err != nil {
			return err
		}
		a.UpdatedAt = time.Now().UTC().Truncate(time.Millisecond)
		if len(a.Config) == 0 {
			a.Config = json.RawMessage("{}")
		}
		if len(a.Tools) == 0 {
			a.Tools = json.RawMessage("[]")
		}
		a.PhoneNumbers = sqldb.NonNil(a.PhoneNumbers)
		phones, err := json.Marshal(a.PhoneNumbers)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE agents SET name = ?, type = ?, status = ?, model = ?, instructions = ?,
			config = ?, tools = ?, phone_numbers = ?, specialty = ?, display_role = ?, updated_at = ?,
			knowledge = ?, fallback = ? WHERE id = ? AND org_id = ?`,
			a.Name, a.Type, a.Status, a.Model, a.Instructions, string(a.Config), string(a.Tools), string(phones),
			a.Specialty, a.DisplayRole, sqldb.MS(a.UpdatedAt), sqldb.NullJSON(a.Knowledge), a.Fallback, id, orgID)
		if err != nil {
			return err
		}
		if err := claimPhones(ctx, tx, a); err != nil {
			return err
		}
		if also != nil {
			return also(ctx, tx, orgID, id)
		}
		return nil
	})
	if err != nil {
		return Agent{}, err
	}
	return a, nil
}

func scanAgent(s sqldb.Scanner) (Agent, error) {
	var a Agent
	var config, tools, phones string
	var created, updated int64
	var knowledge, fallback sql.NullString
	if err := s.Scan(&a.ID, &a.OrgID, &a.Name, &a.Type, &a.Status, &a.Model, &a.Instructions, &config, &tools,
		&phones, &a.Specialty, &a.DisplayRole, &created, &updated, &knowledge, &fallback); err != nil {
		return Agent{}, err
	}
	if knowledge.Valid {
		a.Knowledge = json.RawMessage(knowledge.String)
	}
	if fallback.Valid {
		a.Fallback = &fallback.String
	}
	a.Config, a.Tools = json.RawMessage(config), json.RawMessage(tools)
	if err := json.Unmarshal([]byte(phones), &a.PhoneNumbers); err != nil {
		return Agent{}, fmt.Errorf("agent %s phone numbers: %w", a.ID, err)
	}
	a.PhoneNumbers = sqldb.NonNil(a.PhoneNumbers)
	a.CreatedAt, a.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	return a, nil
}

// VoiceAgentForNumber finds the voice agent a number is assigned to: only
// in the organization holding the number (phone_claims), the oldest agent
// that is not inactive when several are. Never another organization's.
func (db *Agents) VoiceAgentForNumber(ctx context.Context, number string) (Agent, error) {
	row := db.r.QueryRowContext(ctx, "SELECT "+agentColumns+` FROM agents WHERE type = 'voice' AND status != 'inactive'
		AND org_id = (SELECT org_id FROM phone_claims WHERE number = ?)
		AND EXISTS (SELECT 1 FROM json_each(agents.phone_numbers) j WHERE j.value = ?)
		ORDER BY created_at, id LIMIT 1`, number, number)
	a, err := scanAgent(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fmt.Errorf("voice agent with number %q: %w", number, sqldb.ErrNotFound)
	}
	return a, err
}
