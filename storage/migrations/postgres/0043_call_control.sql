-- PostgreSQL twin of ../0043_call_control.sql.
CREATE TABLE call_control (
	call_id     TEXT PRIMARY KEY REFERENCES calls(id) ON DELETE CASCADE,
	answered_by TEXT,
	decision_ms BIGINT,
	transfers   TEXT NOT NULL DEFAULT '[]',
	updated_at  BIGINT NOT NULL
);
