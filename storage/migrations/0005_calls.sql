-- Calls placed (or scheduled) for an agent. Owned by the calls feature;
-- other features rely only on org_id, agent_id, status and the times.
--
-- Life of a call: initiated -> scheduled (due later) | queued (due now) ->
-- connecting -> ringing -> active -> completed, or busy / no_answer / failed
-- / cancelled. A retry puts the call back to scheduled with a new due_at.
--
-- Dialing is claimed in the database: the dial queue moves one queued row to
-- connecting with a fresh claim_token, attempts + 1 and a lease, in one
-- statement guarded by status = 'queued', so two workers (or a restarted
-- process) can never take the same attempt. The owning worker renews
-- lease_until while it dials; an attempt whose lease expired belongs to a
-- dead worker and is settled as failed ('interrupted'), never dialled again.
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
	priority           INTEGER NOT NULL DEFAULT 5 CHECK (priority BETWEEN 0 AND 10),
	scheduled_at       INTEGER,          -- the first attempt's time as asked/computed; NULL = immediate
	due_at             INTEGER NOT NULL, -- when the next attempt may start
	attempts           INTEGER NOT NULL DEFAULT 0, -- attempts claimed so far
	max_retries        INTEGER NOT NULL DEFAULT 0,
	retry_config       TEXT,             -- validated retry policy (JSON), NULL = no retry
	call_window        TEXT,             -- allowed call window (JSON), NULL = any time
	metadata           TEXT NOT NULL DEFAULT '{}',
	call_metadata      TEXT,
	batch_id           TEXT,
	room_id            TEXT,
	job_id             TEXT,
	sip_participant_id TEXT,
	sip_code           INTEGER,
	duration           REAL,
	summary            TEXT,
	failure_reason     TEXT,
	last_outcome       TEXT,             -- how the latest attempt ended (also while waiting for a retry)
	dialer             TEXT,
	claim_token        TEXT,             -- the live attempt's claim; NULL when none
	worker_id          TEXT,
	lease_until        INTEGER,
	started_at         INTEGER,
	answered_at        INTEGER,
	ended_at           INTEGER,
	created_at         INTEGER NOT NULL,
	updated_at         INTEGER NOT NULL
);
CREATE INDEX calls_agent_status ON calls (agent_id, status);
CREATE INDEX calls_org_created ON calls (org_id, created_at DESC);
CREATE INDEX calls_due ON calls (status, priority, due_at);
CREATE INDEX calls_status_due ON calls (status, due_at);
CREATE INDEX calls_worker ON calls (worker_id) WHERE worker_id IS NOT NULL;

-- One row per dial attempt. The primary key makes a second dial of the same
-- attempt impossible even if a claim were ever repeated.
CREATE TABLE call_attempts (
	call_id            TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
	attempt            INTEGER NOT NULL,
	claim_token        TEXT NOT NULL UNIQUE,
	worker_id          TEXT NOT NULL,
	status             TEXT NOT NULL,
	failure_reason     TEXT,
	sip_code           INTEGER,
	room_id            TEXT,
	duration           REAL,
	started_at         INTEGER NOT NULL,
	ended_at           INTEGER,
	PRIMARY KEY (call_id, attempt)
);
