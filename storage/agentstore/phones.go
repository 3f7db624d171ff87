package agentstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentd/agentd/storage/sqldb"
)

// PhoneTakenError refuses a number another organization holds (it wraps
// sqldb.ErrConflict).
type PhoneTakenError struct{ Number string }

func (e *PhoneTakenError) Error() string {
	return "phone number " + e.Number + " is assigned to another organization"
}

func (e *PhoneTakenError) Unwrap() error { return sqldb.ErrConflict }

// claimPhones makes the phone_claims table agree with an agent just
// written, inside its transaction: an active agent's numbers are claimed
// for its organization (a number another organization holds is a
// *PhoneTakenError, which rolls the write back), and numbers no active
// agent of the organization lists any more are released. Writes are
// serialised on both backends, so two organizations claiming one number at
// once cannot both win; the primary key would refuse the second anyway.
func claimPhones(ctx context.Context, tx *sql.Tx, a Agent) error {
	if a.Status != "inactive" {
		for _, n := range a.PhoneNumbers {
			if _, err := tx.ExecContext(ctx, "INSERT INTO phone_claims (number, org_id) VALUES (?, ?) ON CONFLICT (number) DO NOTHING", n, a.OrgID); err != nil {
				return err
			}
			var owner string
			if err := tx.QueryRowContext(ctx, "SELECT org_id FROM phone_claims WHERE number = ?", n).Scan(&owner); err != nil {
				return fmt.Errorf("phone claim %s: %w", n, err)
			}
			if owner != a.OrgID {
				return &PhoneTakenError{Number: n}
			}
		}
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM phone_claims WHERE org_id = ? AND NOT EXISTS (
		SELECT 1 FROM agents, json_each(agents.phone_numbers) j
		WHERE agents.org_id = phone_claims.org_id AND agents.status != 'inactive' AND j.value = phone_claims.number)`, a.OrgID)
	return err
}
