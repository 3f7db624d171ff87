-- Telephony extras (LiveKit and SIP dialers). What the voice agent in the
-- call's room reports about it (POST /api/v1/calls/{id}/result). It lives
-- beside calls, not in it, so the dial queue's writes to a call (which
-- rewrite summary when an attempt ends) never erase it. The agent's extra
-- metadata is merged into calls.metadata under "result" instead, where the
-- call's other metadata is shown.
CREATE TABLE call_results (
	call_id    TEXT PRIMARY KEY REFERENCES calls(id) ON DELETE CASCADE,
	summary    TEXT,
	transcript TEXT,             -- JSON array of {role, text, at}
	outcome    TEXT,             -- label: [a-z0-9_-]{1,64}
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
