-- PostgreSQL twin of ../0024_analysis.sql.
-- Post-call analysis (app/analysis, issue 24). An agent's analysis plan,
-- validated when saved, and one row per analysed call or conversation that
-- is both the durable queue (pending, claimed with a lease like knowledge
-- sources) and the result. The row is inserted in the transaction that
-- records the call's transcript or ends the conversation, so a crash never
-- loses one; re-analysis puts it back to pending.
CREATE TABLE agent_analysis_plans (
	agent_id   TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
	org_id     TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	plan       TEXT NOT NULL,
	updated_at BIGINT NOT NULL
);

CREATE TABLE analyses (
	subject_kind TEXT NOT NULL CHECK (subject_kind IN ('call', 'conversation')),
	subject_id   TEXT NOT NULL,
	org_id       TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	agent_id     TEXT NOT NULL,
	batch_id     TEXT,
	status       TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed', 'skipped')),
	result       TEXT,
	attempts     INTEGER NOT NULL DEFAULT 0,
	due_at       BIGINT NOT NULL,
	lease_owner  TEXT,
	lease_until  BIGINT,
	queued_at    BIGINT NOT NULL,
	analyzed_at  BIGINT,
	PRIMARY KEY (subject_kind, subject_id)
);
CREATE INDEX analyses_due ON analyses (status, due_at);
CREATE INDEX analyses_org_batch ON analyses (org_id, batch_id);
