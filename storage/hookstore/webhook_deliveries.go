package hookstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// Delivery statuses as stored.
const (
	DeliveryPending    = "pending"
	DeliveryDelivering = "delivering"
	DeliverySucceeded  = "succeeded"
	DeliveryFailed     = "failed"
	DeliveryPaused     = "paused"
)

// DeliveryClaim identifies one claim of due deliveries.
type DeliveryClaim struct {
	Token       string // unique per claim
	WorkerID    string
	Now         time.Time
	LeaseUntil  time.Time
	Limit       int // deliveries at most
	PerEndpoint int // in flight per endpoint at most, across processes
	PerOrg      int // in flight per organization at most, across processes; 0: Limit
}

// DeliveryJob is a claimed delivery with what sending it needs.
type DeliveryJob struct {
	ID              string
	Token           string
	Attempt         int // this attempt's number, 1 for the first
	Replay          bool
	EndpointID      string
	URL             string
	Secret          string
	PrevSecret      string
	PrevSecretUntil *time.Time
	Event           sqldb.Event
}

// ClaimDeliveries takes due deliveries in one immediate transaction: each
// moves to delivering with the claim's token, attempts + 1 and its lease's
// end as next_attempt_at. A delivery is due when pending and its time came,
// or delivering under a lease that ran out (its process died). It is never
// taken while an earlier delivery of the same subject to the same endpoint
// is unfinished, so a resource's events arrive in order; and no endpoint
// gets more than PerEndpoint at once.
func (db *Webhooks) ClaimDeliveries(ctx context.Context, cl DeliveryClaim) ([]DeliveryJob, error) {
	now := sqldb.MS(cl.Now)
	var due bool
	if err := db.c.ReadRowFresh(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE status IN ('pending', 'delivering')
		AND next_attempt_at <= ?)`, now).Scan(&due); err != nil {
		return nil, fmt.Errorf("storage: due deliveries: %w", err)
	}
	if !due {
		return nil, nil
	}
	sts, err := db.c.WriterStmts(ctx, qClaimDeliveries, qClaimedJobs)
	if err != nil {
		return nil, fmt.Errorf("storage: claim deliveries: %w", err)
	}
	var jobs []DeliveryJob
	err = db.c.Write(ctx, func(tx *sql.Tx) error {
		jobs = jobs[:0]
		perOrg := cl.PerOrg
		if perOrg <= 0 {
			perOrg = cl.Limit
		}
		ids, err := stmtIDs(ctx, tx.StmtContext(ctx, sts[0]), now, cl.Limit, cl.Token, cl.WorkerID, sqldb.MS(cl.LeaseUntil), cl.PerEndpoint, perOrg)
		if err != nil || len(ids) == 0 {
			return err
		}
		list, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		rows, err := tx.StmtContext(ctx, sts[1]).QueryContext(ctx, string(list))
		if err != nil {
			return err
		}
		jobs, err = sqldb.Collect(rows, func(sc sqldb.Scanner) (DeliveryJob, error) {
			j := DeliveryJob{Token: cl.Token}
			var prev sql.NullString
			var prevUntil sql.NullInt64
			var data string
			var created int64
			if err := sc.Scan(&j.ID, &j.Attempt, &j.Replay, &j.EndpointID, &j.URL, &j.Secret, &prev, &prevUntil,
				&j.Event.Seq, &j.Event.ID, &j.Event.OrgID, &j.Event.Type, &j.Event.Subject, &data, &j.Event.Version, &created); err != nil {
				return j, err
			}
			j.PrevSecret, j.PrevSecretUntil = prev.String, sqldb.OptMS(prevUntil)
			j.Event.Data, j.Event.CreatedAt = json.RawMessage(data), sqldb.FromMS(created)
			return j, db.openSecrets(&j.Secret, &j.PrevSecret)
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("storage: claim deliveries: %w", err)
	}
	return jobs, nil
}

// The claim: candidates are due deliveries of enabled endpoints with no
// unfinished earlier delivery of their subject, at most PerOrg (?7) per
// organization so one organization's backlog cannot crowd the others out
// of the candidates; each endpoint's load is its deliveries in flight (any
// process) plus its rank among candidates, and each organization's the
// same over its endpoints (issue 27 item 4: one organization's hung
// receivers held every slot).
const (
	qClaimDeliveries = `WITH due AS (
			SELECT d.id, d.org_id, d.endpoint_id, d.next_attempt_at, d.event_seq,
				row_number() OVER (PARTITION BY d.org_id ORDER BY d.next_attempt_at, d.event_seq) AS org_rank
			FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled = 1
			WHERE d.status IN ('pending', 'delivering') AND d.next_attempt_at <= ?1
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id
					AND p.order_key = d.order_key AND p.event_seq < d.event_seq AND p.status IN ('pending', 'delivering'))),
		cand AS (
			SELECT id, org_id, endpoint_id, next_attempt_at, event_seq FROM due WHERE org_rank <= ?7
			ORDER BY next_attempt_at, event_seq LIMIT ?2 * 2),
		busy AS (
			SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
			WHERE status = 'delivering' AND next_attempt_at > ?1 GROUP BY endpoint_id),
		busy_org AS (
			SELECT org_id, count(*) AS n FROM webhook_deliveries
			WHERE status = 'delivering' AND next_attempt_at > ?1 GROUP BY org_id),
		ranked AS (
			SELECT id, next_attempt_at, event_seq,
				row_number() OVER (PARTITION BY cand.endpoint_id ORDER BY next_attempt_at, event_seq) +
				coalesce(busy.n, 0) AS load,
				row_number() OVER (PARTITION BY cand.org_id ORDER BY next_attempt_at, event_seq) +
				coalesce(busy_org.n, 0) AS org_load
			FROM cand LEFT JOIN busy ON busy.endpoint_id = cand.endpoint_id
				LEFT JOIN busy_org ON busy_org.org_id = cand.org_id)
		UPDATE webhook_deliveries SET status = 'delivering', claim_token = ?3, worker_id = ?4, attempts = attempts + 1,
			next_attempt_at = ?5, updated_at = ?1
		WHERE id IN (SELECT id FROM ranked WHERE load <= ?6 AND org_load <= ?7 ORDER BY next_attempt_at, event_seq LIMIT ?2)
		RETURNING id`
	qClaimedJobs = `SELECT d.id, d.attempts, d.replay, e.id, e.url, e.secret, e.prev_secret,
		e.prev_secret_until, ev.seq, ev.id, ev.org_id, ev.type, ev.subject, ev.data, ev.data_version, ev.created_at
		FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN events ev ON ev.seq = d.event_seq
		WHERE d.id IN (SELECT value FROM json_each(?)) ORDER BY d.event_seq`
)

// stmtIDs runs a statement returning one id per row.
func stmtIDs(ctx context.Context, st *sql.Stmt, args ...any) ([]string, error) {
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return sqldb.Collect(rows, sqldb.ScanOne[string])
}

// DeliveryResult is how one claimed attempt went, and what comes next.
type DeliveryResult struct {
	ID        string
	Token     string
	Attempt   int
	OK        bool
	Code      int    // HTTP status, 0 when none came back
	Body      string // the response body, at most 1 KB
	Error     string // why it failed ("" on success)
	Duration  time.Duration
	StartedAt time.Time
	// RetryAt is when to try again after a failure; nil: the delivery has
	// failed for good.
	RetryAt *time.Time
	// Release gives the claim back without counting the attempt (the
	// process is stopping); nothing else is recorded.
	Release bool
}

// EndpointFailure is when an endpoint that fails every attempt is
// disabled: its first failure since the last success is older than After.
type EndpointFailure struct {
	After  time.Duration
	Reason func(lastError string) string
}

// FinishDeliveries records claimed attempts in one transaction: each is
// applied only while its claim still holds (a delivery taken over after its
// lease ran out, or deleted with its endpoint, is left alone). A success
// clears the endpoint's failure record; a failure starts it, and disables
// the endpoint when it has failed everything for longer than off.After.
// It returns the endpoints it disabled.
func (db *Webhooks) FinishDeliveries(ctx context.Context, results []DeliveryResult, now time.Time, off EndpointFailure) ([]string, error) {
	sts, err := db.c.WriterStmts(ctx, qReleaseDelivery, qSettleDelivery, qRecordAttempt, qEndpointOK, qEndpointFailed)
	if err != nil {
		return nil, fmt.Errorf("storage: finish deliveries: %w", err)
	}
	var disabled []string
	err = db.c.Write(ctx, func(tx *sql.Tx) error {
		release, settle, record := tx.StmtContext(ctx, sts[0]), tx.StmtContext(ctx, sts[1]), tx.StmtContext(ctx, sts[2])
		endpointOK, endpointFailed := tx.StmtContext(ctx, sts[3]), tx.StmtContext(ctx, sts[4])
		disabled = disabled[:0]
		at := sqldb.MS(now)
		for _, r := range results {
			if r.Release {
				if _, err := release.ExecContext(ctx, at, r.ID, r.Token); err != nil {
					return err
				}
				continue
			}
			status, next := DeliverySucceeded, at
			if !r.OK {
				status = DeliveryFailed
				if r.RetryAt != nil {
					status, next = DeliveryPending, sqldb.MS(*r.RetryAt)
				}
			}
			var endpoint string
			err := settle.QueryRowContext(ctx, status, next, nullInt(r.Code), sqldb.NullStr(r.Error), r.Duration.Milliseconds(),
				sqldb.MS(r.StartedAt), at, r.ID, r.Token).Scan(&endpoint)
			if errors.Is(err, sql.ErrNoRows) {
				continue // not ours any more
			}
			if err != nil {
				return err
			}
			attStatus := DeliverySucceeded
			if !r.OK {
				attStatus = DeliveryFailed
			}
			if _, err := record.ExecContext(ctx, r.ID, r.Attempt, attStatus, nullInt(r.Code), sqldb.NullStr(r.Body),
				sqldb.NullStr(r.Error), r.Duration.Milliseconds(), sqldb.MS(r.StartedAt)); err != nil {
				return err
			}
			if r.OK {
				if _, err := endpointOK.ExecContext(ctx, endpoint); err != nil {
					return err
				}
				continue
			}
			var enabled bool
			var since int64
			if err := endpointFailed.QueryRowContext(ctx, sqldb.MS(r.StartedAt), endpoint).Scan(&enabled, &since); err != nil {
				return err
			}
			switch {
			case enabled && off.After > 0 && since <= at-off.After.Milliseconds():
				if err := disableEndpoint(ctx, tx, endpoint, off.Reason(r.Error), at); err != nil {
					return err
				}
				disabled = append(disabled, endpoint)
			case !enabled && status == DeliveryPending:
				if _, err := tx.ExecContext(ctx, "UPDATE webhook_deliveries SET status = 'paused' WHERE id = ?", r.ID); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("storage: finish deliveries: %w", err)
	}
	return disabled, nil
}

// The statements FinishDeliveries runs for each result.
const (
	qReleaseDelivery = `UPDATE webhook_deliveries SET status = 'pending', attempts = attempts - 1,
		next_attempt_at = ?1, claim_token = NULL, worker_id = NULL, updated_at = ?1
		WHERE id = ?2 AND claim_token = ?3 AND status = 'delivering'`
	qSettleDelivery = `UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, claim_token = NULL,
		worker_id = NULL, replay = 0, last_code = ?, last_error = ?, last_duration = ?, last_attempt_at = ?, updated_at = ?
		WHERE id = ? AND claim_token = ? AND status = 'delivering' RETURNING endpoint_id`
	qRecordAttempt = `INSERT INTO webhook_attempts (delivery_id, attempt, status,
		response_code, response_body, error, duration, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (delivery_id, attempt) DO UPDATE SET status = excluded.status,
		response_code = excluded.response_code, response_body = excluded.response_body, error = excluded.error,
		duration = excluded.duration, started_at = excluded.started_at`
	qEndpointOK     = "UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL"
	qEndpointFailed = `UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ?)
		WHERE id = ? RETURNING enabled, failing_since`
)

// nullInt stores 0 as NULL.
func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

// Delivery is one event owed to one endpoint, with its attempts.
type Delivery struct {
	ID            string
	EndpointID    string
	EventID       string
	EventType     string
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	LastCode      int
	LastError     string
	LastDuration  *time.Duration
	LastAttemptAt *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	History       []DeliveryAttempt
}

// DeliveryAttempt is one HTTP attempt of a delivery.
type DeliveryAttempt struct {
	Attempt      int
	Status       string
	ResponseCode int
	ResponseBody string
	Error        string
	Duration     time.Duration
	StartedAt    time.Time
}

const deliveryCols = `id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, last_code, last_error,
	last_duration, last_attempt_at, created_at, updated_at`

func scanDelivery(s sqldb.Scanner) (Delivery, error) {
	var d Delivery
	var code, dur, lastAt sql.NullInt64
	var lastErr sql.NullString
	var next, created, updated int64
	err := s.Scan(&d.ID, &d.EndpointID, &d.EventID, &d.EventType, &d.Status, &d.Attempts, &next, &code, &lastErr,
		&dur, &lastAt, &created, &updated)
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = sqldb.FromMS(next), sqldb.FromMS(created), sqldb.FromMS(updated)
	d.LastCode, d.LastError, d.LastAttemptAt = int(code.Int64), lastErr.String, sqldb.OptMS(lastAt)
	if dur.Valid {
		x := time.Duration(dur.Int64) * time.Millisecond
		d.LastDuration = &x
	}
	return d, err
}

// DeliveryFilter selects deliveries of one endpoint, newest event first.
type DeliveryFilter struct {
	OrgID      string
	EndpointID string
	Status     string // "" for all
	EventID    string // "" for all
	Limit      int
	Offset     int
}

// ListDeliveries returns a page of an endpoint's deliveries with their
// attempts (limit+1 rows are read so the caller can tell if more exist).
func (db *Webhooks) ListDeliveries(ctx context.Context, f DeliveryFilter) ([]Delivery, error) {
	if _, err := db.GetWebhook(ctx, f.OrgID, f.EndpointID); err != nil {
		return nil, err
	}
	where := []string{"endpoint_id = ?"}
	args := []any{f.EndpointID}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.EventID != "" {
		where, args = append(where, "event_id = ?"), append(args, f.EventID)
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+deliveryCols+" FROM webhook_deliveries WHERE "+strings.Join(where, " AND ")+
		" ORDER BY event_seq DESC LIMIT ? OFFSET ?", append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, fmt.Errorf("storage: list deliveries: %w", err)
	}
	out, err := sqldb.Collect(rows, scanDelivery)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].History, err = db.deliveryAttempts(ctx, out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (db *Webhooks) deliveryAttempts(ctx context.Context, id string) ([]DeliveryAttempt, error) {
	rows, err := db.c.ReadRows(ctx, `SELECT attempt, status, response_code, response_body, error, duration, started_at
		FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt`, id)
	if err != nil {
		return nil, fmt.Errorf("storage: delivery attempts: %w", err)
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (DeliveryAttempt, error) {
		var a DeliveryAttempt
		var code sql.NullInt64
		var body, msg sql.NullString
		var dur, started int64
		err := sc.Scan(&a.Attempt, &a.Status, &code, &body, &msg, &dur, &started)
		a.ResponseCode, a.ResponseBody, a.Error = int(code.Int64), body.String, msg.String
		a.Duration, a.StartedAt = time.Duration(dur)*time.Millisecond, sqldb.FromMS(started)
		return a, err
	})
}

// GetDelivery reads one delivery of an endpoint of the organization.
func (db *Webhooks) GetDelivery(ctx context.Context, orgID, endpointID, id string) (Delivery, error) {
	d, err := scanDelivery(db.r.QueryRowContext(ctx, "SELECT "+deliveryCols+
		" FROM webhook_deliveries WHERE id = ? AND endpoint_id = ? AND org_id = ?", id, endpointID, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("delivery %q: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return d, err
	}
	d.History, err = db.deliveryAttempts(ctx, id)
	return d, err
}

// ErrDeliveryInFlight is returned (wrapping sqldb.ErrConflict) when a delivery
// being sent is asked to be sent again.
var ErrDeliveryInFlight = fmt.Errorf("delivery is being sent: %w", sqldb.ErrConflict)

// RetryDelivery sends a delivery again as soon as possible: a pending one
// is moved to now; a succeeded or failed one is replayed (one more attempt,
// same event id). A delivery in flight is ErrDeliveryInFlight; one of a
// disabled endpoint is ErrWebhookDisabled.
func (db *Webhooks) RetryDelivery(ctx context.Context, orgID, endpointID, id string, now time.Time) (Delivery, error) {
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var status string
		var enabled bool
		err := tx.QueryRowContext(ctx, `SELECT d.status, e.enabled FROM webhook_deliveries d JOIN webhook_endpoints e
			ON e.id = d.endpoint_id WHERE d.id = ? AND d.endpoint_id = ? AND d.org_id = ?`, id, endpointID, orgID).Scan(&status, &enabled)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("delivery %q: %w", id, sqldb.ErrNotFound)
		}
		switch {
		case err != nil:
			return err
		case !enabled:
			return ErrWebhookDisabled
		case status == DeliveryDelivering:
			return ErrDeliveryInFlight
		}
		replay := status == DeliverySucceeded || status == DeliveryFailed
		_, err = tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?,
			replay = CASE WHEN ? = 1 THEN 1 ELSE replay END, updated_at = ? WHERE id = ?`, sqldb.MS(now), replay, sqldb.MS(now), id)
		return err
	})
	if err != nil {
		return Delivery{}, err
	}
	return db.GetDelivery(ctx, orgID, endpointID, id)
}

// NextDeliveryDue is the earliest time a delivery becomes due (a retry, or
// a lease running out); ok is false when none waits.
func (db *Webhooks) NextDeliveryDue(ctx context.Context) (time.Time, bool, error) {
	var v sql.NullInt64
	if err := db.c.ReadRow(ctx, `SELECT min(next_attempt_at) FROM webhook_deliveries
		WHERE status IN ('pending', 'delivering')`).Scan(&v); err != nil {
		return time.Time{}, false, fmt.Errorf("storage: next delivery: %w", err)
	}
	if !v.Valid {
		return time.Time{}, false, nil
	}
	return sqldb.FromMS(v.Int64), true, nil
}
