package callstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// The do-not-call list: numbers (E.164, cleaned by the caller) an
// organization must not call. Listing a number also fails, at once, every
// call to it that has not been dialled yet (failure reason
// ReasonDoNotCall); the dial queue checks the list again before each dial.

// ReasonDoNotCall is the failure reason of a call whose number is on the
// do-not-call list.
const ReasonDoNotCall = "do_not_call"

// DNCEntry is one listed number.
type DNCEntry struct {
	PhoneNumber string
	Reason      string
	CreatedAt   time.Time
}

// dncChunk bounds the numbers per statement (4 parameters each for the
// insert, under SQLite's 32766).
const dncChunk = 2000

// AddDNC lists numbers for the organization (a number already listed keeps
// its reason and date) and fails the organization's waiting calls to them.
// It returns how many numbers were new and how many calls it failed.
func (db *Calls) AddDNC(ctx context.Context, orgID string, numbers []string, reason string, now time.Time) (added, failed int, err error) {
	err = db.c.Write(ctx, func(tx *sql.Tx) error {
		added, failed = 0, 0 // fn runs again after a serialization failure
		for lo := 0; lo < len(numbers); lo += dncChunk {
			part := numbers[lo:min(lo+dncChunk, len(numbers))]
			args := make([]any, 0, 4*len(part))
			for _, n := range part {
				args = append(args, orgID, n, sqldb.NullStr(reason), sqldb.MS(now))
			}
			res, err := tx.ExecContext(ctx, "INSERT INTO dnc_numbers (org_id, phone_number, reason, created_at) VALUES "+
				sqldb.Placeholders("(?, ?, ?, ?)", len(part))+" ON CONFLICT DO NOTHING", args...)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			added += int(n)
		}
		// One pass over the waiting calls (status index), each probing the
		// list's primary key: no index on calls by number to keep up on
		// every call inserted.
		ids, err := queryIDs(ctx, tx, `UPDATE calls SET status = 'failed', failure_reason = ?, ended_at = ?, updated_at = ?
			WHERE status IN `+waitingSQL+` AND org_id = ? AND EXISTS (SELECT 1 FROM dnc_numbers d
				WHERE d.org_id = calls.org_id AND d.phone_number = calls.phone_number) RETURNING id`,
			ReasonDoNotCall, sqldb.MS(now), sqldb.MS(now), orgID)
		if err != nil {
			return err
		}
		failed = len(ids)
		return db.emitCalls(ctx, tx, EventCallEnded, ids)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("storage: add do-not-call numbers: %w", err)
	}
	return added, failed, nil
}

// RemoveDNC takes numbers off the organization's list and returns how many
// were listed.
func (db *Calls) RemoveDNC(ctx context.Context, orgID string, numbers []string) (int, error) {
	removed := 0
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		removed = 0 // fn runs again after a serialization failure
		for lo := 0; lo < len(numbers); lo += dncChunk {
			part := numbers[lo:min(lo+dncChunk, len(numbers))]
			args := []any{orgID}
			for _, n := range part {
				args = append(args, n)
			}
			res, err := tx.ExecContext(ctx, "DELETE FROM dnc_numbers WHERE org_id = ? AND phone_number IN ("+
				sqldb.Placeholders("?", len(part))+")", args...)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			removed += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("storage: remove do-not-call numbers: %w", err)
	}
	return removed, nil
}

// DNCListed reports whether the number is on the organization's list: one
// primary-key probe through the statement cache.
func (db *Calls) DNCListed(ctx context.Context, orgID, number string) (bool, error) {
	var n int
	err := db.c.ReadRow(ctx, "SELECT count(*) FROM dnc_numbers WHERE org_id = ? AND phone_number = ?", orgID, number).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("storage: do-not-call check: %w", err)
	}
	return n > 0, nil
}

// DNCListedAmong returns which of numbers are on the organization's list
// (a batch checks all its numbers at once): one cached statement, the
// numbers passed as a JSON array.
func (db *Calls) DNCListedAmong(ctx context.Context, orgID string, numbers []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(numbers) == 0 {
		return out, nil
	}
	list, err := json.Marshal(numbers)
	if err != nil {
		return nil, err
	}
	rows, err := db.c.ReadRows(ctx, `SELECT j.value FROM json_each(?) j WHERE EXISTS
		(SELECT 1 FROM dnc_numbers d WHERE d.org_id = ? AND d.phone_number = j.value)`, string(list), orgID)
	if err != nil {
		return nil, fmt.Errorf("storage: do-not-call check: %w", err)
	}
	err = sqldb.Each(rows, func(sc sqldb.Scanner) error {
		var n string
		err := sc.Scan(&n)
		out[n] = true
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListDNC returns one page of the organization's list in number order
// (only number when set), and how many numbers match.
func (db *Calls) ListDNC(ctx context.Context, orgID, number string, limit, offset int) ([]DNCEntry, int, error) {
	cond, args := " WHERE org_id = ?", []any{orgID}
	if number != "" {
		cond, args = cond+" AND phone_number = ?", append(args, number)
	}
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM dnc_numbers"+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("storage: count do-not-call numbers: %w", err)
	}
	rows, err := db.r.QueryContext(ctx, "SELECT phone_number, reason, created_at FROM dnc_numbers"+cond+
		" ORDER BY phone_number LIMIT ? OFFSET ?", append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("storage: list do-not-call numbers: %w", err)
	}
	out, err := sqldb.Collect(rows, func(sc sqldb.Scanner) (DNCEntry, error) {
		var e DNCEntry
		var reason sql.NullString
		var created int64
		err := sc.Scan(&e.PhoneNumber, &reason, &created)
		e.Reason, e.CreatedAt = reason.String, sqldb.FromMS(created)
		return e, err
	})
	return out, total, err
}
