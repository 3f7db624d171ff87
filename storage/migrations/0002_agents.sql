-- Agents (voice or chat) of an organization. JSON columns hold the
-- validated config, tools and phone numbers.
--
-- live_calls, finished_calls and completed_calls are call counters kept by
-- the triggers of 0007_agent_stats.sql, so the workforce view reads one row
-- per agent instead of every call of the organization.
CREATE TABLE agents (
	id              TEXT PRIMARY KEY,
	org_id          TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	name            TEXT NOT NULL,
	type            TEXT NOT NULL CHECK (type IN ('voice', 'chat')),
	status          TEXT NOT NULL CHECK (status IN ('active', 'inactive', 'training', 'deployed')),
	model           TEXT NOT NULL DEFAULT '',
	instructions    TEXT NOT NULL DEFAULT '',
	config          TEXT NOT NULL DEFAULT '{}',
	tools           TEXT NOT NULL DEFAULT '[]',
	phone_numbers   TEXT NOT NULL DEFAULT '[]',
	specialty       TEXT NOT NULL DEFAULT '',
	display_role    TEXT NOT NULL DEFAULT '',
	live_calls      INTEGER NOT NULL DEFAULT 0, -- queued, connecting, ringing, active
	finished_calls  INTEGER NOT NULL DEFAULT 0, -- completed, failed, no_answer, busy
	completed_calls INTEGER NOT NULL DEFAULT 0, -- completed
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL
);
CREATE INDEX agents_org_created ON agents (org_id, created_at DESC, id);

-- Jobs assigned to an agent (the v2 worker's assignedJobs). Named
-- agent_jobs: calls.job_id is a telephony dispatch id, not one of these.
CREATE TABLE agent_jobs (
	id           TEXT PRIMARY KEY,
	org_id       TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	agent_id     TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	status       TEXT NOT NULL CHECK (status IN ('active', 'paused')),
	trigger_type TEXT NOT NULL CHECK (trigger_type IN ('manual', 'schedule', 'inbound_call', 'outbound_campaign', 'webhook')),
	trust_level  TEXT NOT NULL CHECK (trust_level IN ('supervised', 'semi_autonomous', 'autonomous')),
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL
);
CREATE INDEX agent_jobs_org_created ON agent_jobs (org_id, created_at DESC);
CREATE INDEX agent_jobs_agent ON agent_jobs (agent_id);
