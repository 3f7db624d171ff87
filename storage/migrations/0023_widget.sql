-- The chat widget (issue 23). widget_secret holds the one server-wide key
-- visitor tokens are signed with: in the database so it survives restarts
-- and is shared by every process; `agentd widget rotate-secret` replaces it.
CREATE TABLE widget_secret (
	id         INTEGER PRIMARY KEY CHECK (id = 1),
	secret     TEXT NOT NULL,
	created_at INTEGER NOT NULL
);

-- Widget messages per agent per UTC day (YYYY-MM-DD), counted here rather
-- than in memory so that config.maxMessagesPerDay holds across processes.
CREATE TABLE widget_daily_counts (
	agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	day      TEXT NOT NULL,
	count    INTEGER NOT NULL,
	PRIMARY KEY (agent_id, day)
);
