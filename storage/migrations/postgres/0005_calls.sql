-- PostgreSQL twin of ../0005_calls.sql. On PostgreSQL the dial queue's
-- claim also locks the rows it takes (FOR UPDATE SKIP LOCKED).
CREATE TABLE calls (
	id                 TEXT PRIMARY KEY,
	org_id             TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	agent_id           TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	direction          TEXT NOT NULL DEFAULT 'outbound' CHECK (direction IN ('inbound', 'outbound')),
	status             TEXT NOT NULL CHECK (status IN ('initiated', 'queued', 'scheduled', 'connecting',
		'ringing', 'active', 'completed', 'failed', 'cancelled', 'no_answer', 'busy')),
	phone_number       TEXT NOT NULL,
	caller_id          TEXT NOT NULL DEFAULT '',
	contact_name       TEXT,
	contact_email      TEXT,
	priority           BIGINT NOT NULL DEFAULT 5 CHECK (priority BETWEEN 0 AND 10),
	scheduled_at       BIGINT,
	due_at             BIGINT NOT NULL,
	attempts           BIGINT NOT NULL DEFAULT 0,
	max_retries        BIGINT NOT NULL DEFAULT 0,
	retry_config       TEXT,
	call_window        TEXT,
	metadata           TEXT NOT NULL DEFAULT '{}',
	call_metadata      TEXT,
	batch_id           TEXT,
	room_id            TEXT,
	job_id             TEXT,
	sip_participant_id TEXT,
	sip_code           BIGINT,
	duration           DOUBLE PRECISION,
	summary            TEXT,
	failure_reason     TEXT,
	last_outcome       TEXT,
	dialer             TEXT,
	claim_token        TEXT,
	worker_id          TEXT,
	lease_until        BIGINT,
	started_at         BIGINT,
	answered_at        BIGINT,
	ended_at           BIGINT,
	created_at         BIGINT NOT NULL,
	updated_at         BIGINT NOT NULL
);
CREATE INDEX calls_agent_status ON calls (agent_id, status);
CREATE INDEX calls_org_created ON calls (org_id, created_at DESC);
CREATE INDEX calls_due ON calls (status, priority, due_at);
CREATE INDEX calls_status_due ON calls (status, due_at);
CREATE INDEX calls_worker ON calls (worker_id) WHERE worker_id IS NOT NULL;

CREATE TABLE call_attempts (
	call_id            TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
	attempt            BIGINT NOT NULL,
	claim_token        TEXT NOT NULL UNIQUE,
	worker_id          TEXT NOT NULL,
	status             TEXT NOT NULL,
	failure_reason     TEXT,
	sip_code           BIGINT,
	room_id            TEXT,
	duration           DOUBLE PRECISION,
	started_at         BIGINT NOT NULL,
	ended_at           BIGINT,
	PRIMARY KEY (call_id, attempt)
);
