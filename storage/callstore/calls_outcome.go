package callstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// OutcomeVoicemail is the last outcome of an attempt a voice agent reported
// as answered by voicemail.
const OutcomeVoicemail = "voicemail"

// SettleVoicemail applies a voicemail outcome reported after the attempt
// already ended completed: the attempt and the call's last outcome become
// voicemail and, with retryAt, the call goes back to scheduled for its next
// attempt. Only the call's latest attempt, still completed, is changed;
// done is false otherwise.
func (db *Calls) SettleVoicemail(ctx context.Context, id string, attempt int, retryAt *time.Time, now time.Time) (bool, error) {
	var done bool
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var res sql.Result
		var err error
		if retryAt != nil {
			res, err = tx.ExecContext(ctx, `UPDATE calls SET status = 'scheduled', last_outcome = 'voicemail', due_at = ?,
				ended_at = NULL, updated_at = ? WHERE id = ? AND attempts = ? AND status = 'completed'`,
				sqldb.MS(*retryAt), sqldb.MS(now), id, attempt)
		} else {
			res, err = tx.ExecContext(ctx, `UPDATE calls SET last_outcome = 'voicemail', updated_at = ?
				WHERE id = ? AND attempts = ? AND status = 'completed'`, sqldb.MS(now), id, attempt)
		}
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		if done = n > 0; !done {
			return nil
		}
		if _, err = tx.ExecContext(ctx, "UPDATE call_attempts SET status = 'voicemail' WHERE call_id = ? AND attempt = ?", id, attempt); err != nil {
			return err
		}
		if retryAt != nil {
			return db.emitCalls(ctx, tx, EventCallRetryScheduled, []string{id})
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("storage: settle voicemail: %w", err)
	}
	return done, nil
}
