-- A call's transcript as rows (issue 32). Each turn of a voice call used to
-- read, extend and rewrite the whole JSON array in call_results.transcript:
-- 30 turns of 1.2 MB wrote 544 MB of WAL, and multi-megabyte messages ended
-- in "disk I/O error". A line is now one row, written once. A worker's
-- whole-transcript result POST still lands in call_results.transcript and,
-- when given, is the call's transcript (callstore.Calls.Transcript).
CREATE TABLE call_transcript_lines (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	call_id     TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL,            -- 0, 1, ... per call
	role        TEXT NOT NULL,               -- agent | user | tool
	text        TEXT NOT NULL,
	at          INTEGER NOT NULL,            -- unix ms
	interrupted INTEGER NOT NULL DEFAULT 0,  -- the agent was cut off (barge-in)
	UNIQUE (call_id, seq)
);

-- The tools secret's rotation keeps the previous one valid for a while
-- (url tool calls are signed with both), as webhook secrets do.
ALTER TABLE org_tools_secrets ADD COLUMN prev_secret TEXT;
ALTER TABLE org_tools_secrets ADD COLUMN prev_secret_until INTEGER;
