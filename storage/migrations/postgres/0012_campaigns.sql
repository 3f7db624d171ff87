-- PostgreSQL twin of ../0012_campaigns.sql.
CREATE TABLE call_batches (
	id         TEXT PRIMARY KEY,
	org_id     TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	agent_id   TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	name       TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL CHECK (status IN ('running', 'paused', 'cancelled')),
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
CREATE INDEX call_batches_org_created ON call_batches (org_id, created_at DESC, id);
CREATE INDEX call_batches_paused ON call_batches (status) WHERE status = 'paused';

INSERT INTO call_batches (id, org_id, agent_id, name, status, created_at, updated_at)
	SELECT batch_id, min(org_id), min(agent_id), '', 'running', min(created_at), max(updated_at)
	FROM calls WHERE batch_id IS NOT NULL GROUP BY batch_id;

CREATE INDEX calls_inbound_live ON calls (status) WHERE direction = 'inbound';

CREATE TABLE dnc_numbers (
	org_id       TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	phone_number TEXT NOT NULL,
	reason       TEXT,
	created_at   BIGINT NOT NULL,
	PRIMARY KEY (org_id, phone_number)
);

CREATE TABLE org_settings (
	org_id        TEXT PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
	calling_hours TEXT,
	updated_at    BIGINT NOT NULL
);
