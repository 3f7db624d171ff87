-- Events and client webhooks. Owned by the events feature (app/events).
--
-- events is the log (a transactional outbox): every row is written in the
-- same transaction as the change it reports, so nothing committed goes
-- unreported and nothing rolled back is reported. seq orders the log across
-- processes (SQLite has one writer at a time); AUTOINCREMENT never reuses a
-- seq, so cursors stay valid after old events are pruned. subject is the
-- resource the event is about (call:<id>, kb_source:<id>, ...): deliveries
-- of one subject to one endpoint go out in seq order. target_endpoint is set
-- only for a ping, which goes to that endpoint alone.
CREATE TABLE events (
	seq             INTEGER PRIMARY KEY AUTOINCREMENT,
	id              TEXT NOT NULL UNIQUE,
	org_id          TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	type            TEXT NOT NULL,
	subject         TEXT NOT NULL,
	data            TEXT NOT NULL,
	target_endpoint TEXT,
	created_at      INTEGER NOT NULL
);
CREATE INDEX events_org_seq ON events (org_id, seq);

-- A client's receiver. secret signs every delivery (Standard Webhooks); it
-- is never returned after creation or rotation and never logged.
-- prev_secret also signs until prev_secret_until (24 h after a rotation).
-- cursor is the last event seq fanned out to this endpoint. failing_since
-- is the first failed attempt since the last success: an endpoint failing
-- everything for 24 h is disabled with disabled_reason.
CREATE TABLE webhook_endpoints (
	id                TEXT PRIMARY KEY,
	org_id            TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	url               TEXT NOT NULL,
	description       TEXT NOT NULL DEFAULT '',
	events            TEXT NOT NULL, -- JSON array of event types, ["*"] for all
	enabled           INTEGER NOT NULL DEFAULT 1,
	disabled_reason   TEXT,
	disabled_at       INTEGER,
	secret            TEXT NOT NULL,
	prev_secret       TEXT,
	prev_secret_until INTEGER,
	cursor            INTEGER NOT NULL DEFAULT 0,
	failing_since     INTEGER,
	created_at        INTEGER NOT NULL,
	updated_at        INTEGER NOT NULL
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id, created_at);

-- One event owed to one endpoint. Claimed like a dial attempt: status
-- 'delivering' with a claim_token and next_attempt_at = the lease's end, in
-- one guarded UPDATE, so two processes never send the same attempt at once
-- and a killed process's claim is taken again when its lease runs out.
-- 'paused' deliveries belong to a disabled endpoint and resume when it is
-- enabled again. last_* mirror the latest attempt for the list.
CREATE TABLE webhook_deliveries (
	id              TEXT PRIMARY KEY,
	org_id          TEXT NOT NULL,
	endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
	event_seq       INTEGER NOT NULL,
	event_id        TEXT NOT NULL,
	event_type      TEXT NOT NULL,
	order_key       TEXT NOT NULL,
	status          TEXT NOT NULL CHECK (status IN ('pending', 'delivering', 'succeeded', 'failed', 'paused')),
	attempts        INTEGER NOT NULL DEFAULT 0,
	replay          INTEGER NOT NULL DEFAULT 0, -- a manual retry: one attempt, no schedule
	next_attempt_at INTEGER NOT NULL,
	claim_token     TEXT,
	worker_id       TEXT,
	last_code       INTEGER,
	last_error      TEXT,
	last_duration   INTEGER, -- milliseconds
	last_attempt_at INTEGER,
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL,
	UNIQUE (endpoint_id, event_seq)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, event_seq)
	WHERE status IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_busy ON webhook_deliveries (endpoint_id, next_attempt_at)
	WHERE status = 'delivering';
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, order_key, event_seq)
	WHERE status IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, event_seq DESC);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);

-- Every HTTP attempt of a delivery: what the receiver answered (body kept to
-- 1 KB) or why it could not be reached.
CREATE TABLE webhook_attempts (
	delivery_id   TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
	attempt       INTEGER NOT NULL,
	status        TEXT NOT NULL CHECK (status IN ('succeeded', 'failed')),
	response_code INTEGER,
	response_body TEXT,
	error         TEXT,
	duration      INTEGER NOT NULL, -- milliseconds
	started_at    INTEGER NOT NULL,
	PRIMARY KEY (delivery_id, attempt)
);

-- batch.completed needs "is every call of this batch final?" at each final
-- transition of a batch call, without scanning the calls table.
CREATE INDEX calls_batch ON calls (batch_id, status) WHERE batch_id IS NOT NULL;
