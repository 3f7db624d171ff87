package hookstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// WebhookEndpoint is a client's receiver of events. Secret and PrevSecret
// sign deliveries; callers must never log or show them after creation.
type WebhookEndpoint struct {
	ID              string
	OrgID           string
	URL             string
	Description     string
	Events          []string // event types, or ["*"]
	Enabled         bool
	DisabledReason  string
	DisabledAt      *time.Time
	Secret          string
	PrevSecret      string
	PrevSecretUntil *time.Time
	FailingSince    *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

const endpointCols = `id, org_id, url, description, events, enabled, disabled_reason, disabled_at, secret,
	prev_secret, prev_secret_until, failing_since, created_at, updated_at`

func scanEndpoint(s sqldb.Scanner) (WebhookEndpoint, error) {
	var e WebhookEndpoint
	var events string
	var reason, prev sql.NullString
	var disabledAt, prevUntil, failing sql.NullInt64
	var created, updated int64
	err := s.Scan(&e.ID, &e.OrgID, &e.URL, &e.Description, &events, &e.Enabled, &reason, &disabledAt, &e.Secret,
		&prev, &prevUntil, &failing, &created, &updated)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal([]byte(events), &e.Events); err != nil {
		return e, fmt.Errorf("storage: webhook %s events: %w", e.ID, err)
	}
	e.DisabledReason, e.PrevSecret = reason.String, prev.String
	e.DisabledAt, e.PrevSecretUntil, e.FailingSince = sqldb.OptMS(disabledAt), sqldb.OptMS(prevUntil), sqldb.OptMS(failing)
	e.CreatedAt, e.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	return e, nil
}

// CreateWebhook stores a new endpoint; it receives the events logged from
// now on (its cursor starts at the end of the log).
func (db *Webhooks) CreateWebhook(ctx context.Context, e WebhookEndpoint) (WebhookEndpoint, error) {
	now := time.Now().UTC()
	e.ID, e.Enabled, e.CreatedAt, e.UpdatedAt = uuid.NewString(), true, now, now
	events, err := json.Marshal(e.Events)
	if err != nil {
		return e, err
	}
	sealed, err := db.box.Seal(e.Secret)
	if err != nil {
		return e, err
	}
	err = db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (id, org_id, url, description, events, secret, `+db.cursorNow()+`,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, `+db.cursorNowValue()+`, ?, ?)`,
			e.ID, e.OrgID, e.URL, e.Description, string(events), sealed, sqldb.MS(now), sqldb.MS(now))
		return err
	})
	if err != nil {
		return WebhookEndpoint{}, fmt.Errorf("storage: create webhook: %w", err)
	}
	return e, nil
}

// GetWebhook reads one endpoint of the organization (another
// organization's is sqldb.ErrNotFound).
func (db *Webhooks) GetWebhook(ctx context.Context, orgID, id string) (WebhookEndpoint, error) {
	e, err := scanEndpoint(db.r.QueryRowContext(ctx, "SELECT "+endpointCols+" FROM webhook_endpoints WHERE id = ? AND org_id = ?", id, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("webhook %q: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return e, err
	}
	return e, db.openSecrets(&e.Secret, &e.PrevSecret)
}

// ListWebhooks lists the organization's endpoints, oldest first.
func (db *Webhooks) ListWebhooks(ctx context.Context, orgID string) ([]WebhookEndpoint, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+endpointCols+" FROM webhook_endpoints WHERE org_id = ? ORDER BY created_at, id", orgID)
	if err != nil {
		return nil, fmt.Errorf("storage: list webhooks: %w", err)
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (WebhookEndpoint, error) {
		e, err := scanEndpoint(sc)
		if err == nil {
			err = db.openSecrets(&e.Secret, &e.PrevSecret)
		}
		return e, err
	})
}

// WebhookPatch changes some fields of an endpoint; nil fields stay.
type WebhookPatch struct {
	URL         *string
	Events      []string // nil: unchanged
	Description *string
	Enabled     *bool
}

// UpdateWebhook applies a patch. Disabling pauses the endpoint's pending
// deliveries; enabling resumes them, clears the failure record and starts
// its fan-out at the end of the log (events logged while it was disabled
// are not sent; GET /api/v2/events has them).
func (db *Webhooks) UpdateWebhook(ctx context.Context, orgID, id string, p WebhookPatch) (WebhookEndpoint, error) {
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var enabled bool
		err := tx.QueryRowContext(ctx, "SELECT enabled FROM webhook_endpoints WHERE id = ? AND org_id = ?", id, orgID).Scan(&enabled)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("webhook %q: %w", id, sqldb.ErrNotFound)
		}
		if err != nil {
			return err
		}
		now := sqldb.MS(time.Now())
		var events any
		if p.Events != nil {
			b, err := json.Marshal(p.Events)
			if err != nil {
				return err
			}
			events = string(b)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET url = coalesce(?, url), events = coalesce(?, events),
			description = coalesce(?, description), updated_at = ? WHERE id = ?`, p.URL, events, p.Description, now, id); err != nil {
			return err
		}
		switch {
		case p.Enabled == nil || *p.Enabled == enabled:
		case *p.Enabled:
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET enabled = 1, disabled_reason = NULL, disabled_at = NULL,
				failing_since = NULL, (`+db.cursorNow()+`) = (SELECT `+db.cursorNowValue()+`) WHERE id = ?`, id); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, updated_at = ?
				WHERE endpoint_id = ? AND status = 'paused'`, now, now, id)
			return err
		default:
			return disableEndpoint(ctx, tx, id, "disabled by a user", now)
		}
		return nil
	})
	if err != nil {
		return WebhookEndpoint{}, err
	}
	return db.GetWebhook(ctx, orgID, id)
}

// disableEndpoint turns an endpoint off with a reason and pauses its
// pending deliveries (a delivery in flight is paused when it settles).
func disableEndpoint(ctx context.Context, tx *sql.Tx, id, reason string, now int64) error {
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, disabled_at = ?, updated_at = ?
		WHERE id = ?`, reason, now, now, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'paused', updated_at = ?
		WHERE endpoint_id = ? AND status = 'pending'`, now, id)
	return err
}

// DeleteWebhook removes an endpoint with its deliveries and attempts.
func (db *Webhooks) DeleteWebhook(ctx context.Context, orgID, id string) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM webhook_endpoints WHERE id = ? AND org_id = ?", id, orgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("webhook %q: %w", id, sqldb.ErrNotFound)
		}
		return nil
	})
}

// RotateWebhookSecret makes secret the endpoint's signing secret; the
// current one keeps signing too until prevUntil.
func (db *Webhooks) RotateWebhookSecret(ctx context.Context, orgID, id, secret string, prevUntil time.Time) (WebhookEndpoint, error) {
	secret, err := db.box.Seal(secret)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	err = db.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET prev_secret = secret, prev_secret_until = ?, secret = ?,
			updated_at = ? WHERE id = ? AND org_id = ?`, sqldb.MS(prevUntil), secret, sqldb.MS(time.Now()), id, orgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("webhook %q: %w", id, sqldb.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return WebhookEndpoint{}, err
	}
	return db.GetWebhook(ctx, orgID, id)
}

// ErrWebhookDisabled is returned (wrapping sqldb.ErrConflict) when a disabled
// endpoint is asked to send something.
var ErrWebhookDisabled = fmt.Errorf("webhook is disabled: %w", sqldb.ErrConflict)

// PingWebhook logs a ping event for one endpoint and queues its delivery,
// in one transaction. data is the ping's data.
func (db *Webhooks) PingWebhook(ctx context.Context, orgID, id string, data any) (sqldb.Event, error) {
	var ev sqldb.Event
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var enabled bool
		err := tx.QueryRowContext(ctx, "SELECT enabled FROM webhook_endpoints WHERE id = ? AND org_id = ?", id, orgID).Scan(&enabled)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("webhook %q: %w", id, sqldb.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if !enabled {
			return ErrWebhookDisabled
		}
		evs, err := db.c.InsertEvents(ctx, tx, []sqldb.PendingEvent{{Type: EventPing, Subject: "webhook:" + id, OrgID: orgID,
			Data: data, Target: id}})
		if err != nil {
			return err
		}
		ev = evs[0]
		now := sqldb.MS(time.Now())
		_, err = tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_seq, event_id, event_type,
			order_key, status, next_attempt_at, created_at, updated_at)
			SELECT ?, org_id, ?, seq, id, type, subject, 'pending', ?, ?, ? FROM events WHERE id = ?`,
			uuid.NewString(), id, now, now, now, ev.ID)
		return err
	})
	if err != nil {
		return sqldb.Event{}, err
	}
	return ev, nil
}

// fanOutStep bounds the events one fan-out moves per endpoint, so a long
// backlog never makes one huge transaction.
const fanOutStep = 2000

// FanOutEvents creates the deliveries owed to every enabled endpoint for
// the events logged since its cursor (matching its types, of its
// organization) and moves the cursors, in one transaction. It returns how
// many deliveries it created. The UNIQUE (endpoint, event) key makes a
// repeat harmless.
func (db *Webhooks) FanOutEvents(ctx context.Context) (int, error) {
	return sqldb.PerDialect[func(context.Context) (int, error)]{SQLite: db.fanOutSQLite, Postgres: db.fanOutPG}.For(db.c.Dialect())(ctx)
}

// fanOutSQLite is FanOutEvents on SQLite, whose one writer commits events
// in seq order: an endpoint's cursor is a seq.
func (db *Webhooks) fanOutSQLite(ctx context.Context) (int, error) {
	var behind bool
	if err := db.c.ReadRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled = 1
		AND cursor < (SELECT coalesce(max(seq), 0) FROM events))`).Scan(&behind); err != nil {
		return 0, fmt.Errorf("storage: fan-out check: %w", err)
	}
	if !behind {
		return 0, nil
	}
	var n int64
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var top int64
		if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM events").Scan(&top); err != nil {
			return err
		}
		now := sqldb.MS(time.Now())
		uuid := db.c.Dialect().UUID()
		res, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_seq, event_id,
			event_type, order_key, status, next_attempt_at, created_at, updated_at)
			SELECT `+uuid+`, w.org_id, w.id, ev.seq, ev.id, ev.type, ev.subject, 'pending', ?, ?, ?
			FROM webhook_endpoints w JOIN events ev ON ev.org_id = w.org_id AND ev.seq > w.cursor AND ev.seq <= min(?, w.cursor + ?)
			WHERE w.enabled = 1 AND w.cursor < ? AND ev.target_endpoint IS NULL
				AND ((w.events = '["*"]' AND ev.type <> 'call.transcript') OR EXISTS (SELECT 1 FROM json_each(w.events) j WHERE j.value = ev.type))
			ORDER BY w.id, ev.seq
			ON CONFLICT DO NOTHING`, now, now, now, top, fanOutStep, top)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		_, err = tx.ExecContext(ctx, `UPDATE webhook_endpoints SET cursor = min(?, cursor + ?) WHERE enabled = 1 AND cursor < ?`,
			top, fanOutStep, top)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("storage: fan out events: %w", err)
	}
	return int(n), nil
}
