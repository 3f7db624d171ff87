package agentstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/agentd/agentd/storage/sqldb"
)

// ResealToolHeaders rewrites the header values of every agent's mcp tools
// (app/agents seals them) sealed with `to`, opening each with `from`, in one
// transaction: the secret key's rotation. It returns how many agents it
// rewrote.
func (db *Agents) ResealToolHeaders(ctx context.Context, from, to sqldb.Sealer) (int, error) {
	n := 0
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, tools FROM agents WHERE tools LIKE '%"mcp"%'`)
		if err != nil {
			return err
		}
		type row struct{ id, tools string }
		var all []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.tools); err != nil {
				rows.Close()
				return err
			}
			all = append(all, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range all {
			out, changed, err := resealTools(json.RawMessage(r.tools), from, to)
			if err != nil {
				return fmt.Errorf("tools of agent %s: %w", r.id, err)
			}
			if !changed {
				continue
			}
			if _, err := tx.ExecContext(ctx, "UPDATE agents SET tools = ? WHERE id = ?", string(out), r.id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// resealTools reseals the headers of the mcp entries of one tools array.
func resealTools(raw json.RawMessage, from, to sqldb.Sealer) (json.RawMessage, bool, error) {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return raw, false, nil
	}
	changed := false
	for _, item := range items {
		var typ string
		if json.Unmarshal(item["type"], &typ) != nil || typ != "mcp" {
			continue
		}
		var h map[string]string
		if json.Unmarshal(item["headers"], &h) != nil || len(h) == 0 {
			continue
		}
		for k, v := range h {
			plain, err := from.Open(v)
			if err != nil {
				return nil, false, err
			}
			if h[k], err = to.Seal(plain); err != nil {
				return nil, false, err
			}
		}
		item["headers"], _ = json.Marshal(h)
		changed = true
	}
	if !changed {
		return raw, false, nil
	}
	b, err := json.Marshal(items)
	return b, err == nil, err
}

// WithMCPTools lists the agents of every organization, not inactive, whose
// tools hold an mcp entry (id, organization, name and tools only): what
// agentd doctor probes.
func (db *Agents) WithMCPTools(ctx context.Context) ([]Agent, error) {
	rows, err := db.c.Reader().QueryContext(ctx, `SELECT id, org_id, name, tools FROM agents
		WHERE status <> 'inactive' AND tools LIKE '%"mcp"%' ORDER BY org_id, id LIMIT 1000`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Agent
	for rows.Next() {
		var a Agent
		var tools string
		if err := rows.Scan(&a.ID, &a.OrgID, &a.Name, &tools); err != nil {
			return nil, err
		}
		a.Tools = json.RawMessage(tools)
		out = append(out, a)
	}
	return out, rows.Err()
}
