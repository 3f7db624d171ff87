package callstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// OrgSettings are an organization's settings. CallingHours is the dial
// package's JSON; nil means the defaults.
type OrgSettings struct {
	CallingHours   json.RawMessage
	EnforceV1Roles bool      // /v1 applies the role's capabilities (issue 27)
	UpdatedAt      time.Time // zero when never saved
}

// GetOrgSettings reads the organization's settings; an organization that
// never saved any has the zero value. It is on the path of every schedule
// and dial, so it goes through the statement cache.
func (db *Calls) GetOrgSettings(ctx context.Context, orgID string) (OrgSettings, error) {
	var s OrgSettings
	var hours sql.NullString
	var updated int64
	var enforce int
	err := db.c.ReadRow(ctx, "SELECT calling_hours, enforce_v1_roles, updated_at FROM org_settings WHERE org_id = ?", orgID).Scan(&hours, &enforce, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return OrgSettings{}, nil
	}
	if err != nil {
		return OrgSettings{}, fmt.Errorf("storage: org settings: %w", err)
	}
	if hours.Valid {
		s.CallingHours = json.RawMessage(hours.String)
	}
	s.EnforceV1Roles = enforce != 0
	s.UpdatedAt = sqldb.FromMS(updated)
	return s, nil
}

// SaveOrgSettings replaces the organization's settings.
func (db *Calls) SaveOrgSettings(ctx context.Context, orgID string, s OrgSettings, now time.Time) error {
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		enforce := 0
		if s.EnforceV1Roles {
			enforce = 1
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO org_settings (org_id, calling_hours, enforce_v1_roles, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (org_id) DO UPDATE SET calling_hours = excluded.calling_hours,
				enforce_v1_roles = excluded.enforce_v1_roles, updated_at = excluded.updated_at`,
			orgID, sqldb.NullJSON(s.CallingHours), enforce, sqldb.MS(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("storage: save org settings: %w", err)
	}
	return nil
}
