-- Calls placed (or scheduled) for an agent. Owned by the calls feature;
-- other features rely only on org_id, agent_id, status and the times.
CREATE TABLE calls (
	id                 TEXT PRIMARY KEY,
	org_id             TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	agent_id           TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	direction          TEXT NOT NULL DEFAULT 'outbound' CHECK (direction IN ('inbound', 'outbound')),
	status             TEXT NOT NULL,
	phone_number       TEXT NOT NULL,
	caller_id          TEXT NOT NULL DEFAULT '',
	contact_name       TEXT,
	contact_email      TEXT,
	priority           INTEGER NOT NULL DEFAULT 5,
	scheduled_at       INTEGER,
	due_at             INTEGER,
	attempts           INTEGER NOT NULL DEFAULT 0,
	max_retries        INTEGER NOT NULL DEFAULT 0,
	retry_config       TEXT,
	call_window        TEXT,
	metadata           TEXT NOT NULL DEFAULT '{}',
	call_metadata      TEXT,
	room_id            TEXT,
	job_id             TEXT,
	sip_participant_id TEXT,
	duration           REAL,
	summary            TEXT,
	failure_reason     TEXT,
	started_at         INTEGER,
	answered_at        INTEGER,
	ended_at           INTEGER,
	created_at         INTEGER NOT NULL,
	updated_at         INTEGER NOT NULL
);
CREATE INDEX calls_agent_status ON calls (agent_id, status);
CREATE INDEX calls_org_created ON calls (org_id, created_at DESC);
CREATE INDEX calls_due ON calls (status, priority, due_at);
