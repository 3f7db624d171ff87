-- Campaigns and calling compliance: batches as steerable campaigns, the
-- do-not-call list, organization settings (calling hours) and lookups for
-- inbound calls.
--
-- A batch's stored status is running, paused or cancelled; "completed" is
-- derived (no call of the batch is waiting or live). Pausing moves the
-- batch's waiting calls to scheduled and the scheduler never promotes the
-- calls of a paused batch, so no new dial starts; resuming lets them fall
-- due again.
CREATE TABLE call_batches (
	id         TEXT PRIMARY KEY,
	org_id     TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	agent_id   TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	name       TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL CHECK (status IN ('running', 'paused', 'cancelled')),
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX call_batches_org_created ON call_batches (org_id, created_at DESC, id);
CREATE INDEX call_batches_paused ON call_batches (status) WHERE status = 'paused';

-- Batches stored before this migration become running campaigns without a name.
INSERT INTO call_batches (id, org_id, agent_id, name, status, created_at, updated_at)
	SELECT batch_id, min(org_id), min(agent_id), '', 'running', min(created_at), max(updated_at)
	FROM calls WHERE batch_id IS NOT NULL GROUP BY batch_id;

-- calls_batch (batch_id, status) comes from 0008_events.sql.
-- Inbound calls are found again by their SIP Call-ID or LiveKit room when they end.
CREATE INDEX calls_inbound_live ON calls (status) WHERE direction = 'inbound';

-- The do-not-call list of an organization: E.164 numbers. WITHOUT ROWID
-- keeps the primary key the table, so a check is one B-tree probe even with
-- millions of numbers listed.
CREATE TABLE dnc_numbers (
	org_id       TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	phone_number TEXT NOT NULL,
	reason       TEXT,
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (org_id, phone_number)
) WITHOUT ROWID;

-- Organization settings. calling_hours is the dial package's JSON
-- (enabled, start, end, days, defaultTimezone); NULL means the defaults
-- (calling hours off).
CREATE TABLE org_settings (
	org_id        TEXT PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
	calling_hours TEXT,
	updated_at    INTEGER NOT NULL
);
