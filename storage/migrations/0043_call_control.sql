-- Call control on agentd's own voice calls (app/voice): who answered an
-- outbound call (answering-machine detection: human, machine or unknown,
-- and when it was decided) and each transfer attempt. A table of its
-- own, one row per call, read by the call read like call_latency.
CREATE TABLE call_control (
	call_id     TEXT PRIMARY KEY REFERENCES calls(id) ON DELETE CASCADE,
	answered_by TEXT,             -- human, machine, unknown; NULL: not detected
	decision_ms INTEGER,          -- audio heard from the answer to the decision
	transfers   TEXT NOT NULL DEFAULT '[]', -- JSON array of {destination, mode, reason, outcome, at, ...}
	updated_at  INTEGER NOT NULL
);
