-- The dashboard's aggregates (storage/dashboard.go) without scanning calls.
--
-- call_hours counts the calls that ended in each hour (ended_at / 3600000)
-- by final status, and how many of them someone answered: the overview's
-- outcomes, answer rate and 7-day chart read a few hundred rows of it
-- instead of every call of the week. Triggers keep it equal to a recount
-- over calls, like the agent counters of 0007_agent_stats.sql; rows may
-- drop to zero and stay.
CREATE TABLE call_hours (
	org_id   TEXT NOT NULL,
	hour     INTEGER NOT NULL,
	status   TEXT NOT NULL,
	calls    INTEGER NOT NULL DEFAULT 0,
	answered INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (org_id, hour, status)
) WITHOUT ROWID;

INSERT INTO call_hours (org_id, hour, status, calls, answered)
	SELECT org_id, ended_at / 3600000, status, count(*), count(answered_at) FROM calls
	WHERE ended_at IS NOT NULL AND status IN ('completed', 'failed', 'cancelled', 'no_answer', 'busy')
	GROUP BY org_id, ended_at / 3600000, status;

CREATE TRIGGER call_hours_insert AFTER INSERT ON calls
WHEN NEW.ended_at IS NOT NULL AND NEW.status IN ('completed', 'failed', 'cancelled', 'no_answer', 'busy')
BEGIN
	INSERT INTO call_hours (org_id, hour, status, calls, answered)
	VALUES (NEW.org_id, NEW.ended_at / 3600000, NEW.status, 1, NEW.answered_at IS NOT NULL)
	ON CONFLICT (org_id, hour, status) DO UPDATE SET calls = calls + 1, answered = answered + excluded.answered;
END;

CREATE TRIGGER call_hours_update_old AFTER UPDATE OF org_id, status, ended_at, answered_at ON calls
WHEN OLD.ended_at IS NOT NULL AND OLD.status IN ('completed', 'failed', 'cancelled', 'no_answer', 'busy')
	AND (OLD.org_id IS NOT NEW.org_id OR OLD.status IS NOT NEW.status OR OLD.ended_at IS NOT NEW.ended_at
		OR (OLD.answered_at IS NULL) != (NEW.answered_at IS NULL))
BEGIN
	UPDATE call_hours SET calls = calls - 1, answered = answered - (OLD.answered_at IS NOT NULL)
	WHERE org_id = OLD.org_id AND hour = OLD.ended_at / 3600000 AND status = OLD.status;
END;

CREATE TRIGGER call_hours_update_new AFTER UPDATE OF org_id, status, ended_at, answered_at ON calls
WHEN NEW.ended_at IS NOT NULL AND NEW.status IN ('completed', 'failed', 'cancelled', 'no_answer', 'busy')
	AND (OLD.org_id IS NOT NEW.org_id OR OLD.status IS NOT NEW.status OR OLD.ended_at IS NOT NEW.ended_at
		OR (OLD.answered_at IS NULL) != (NEW.answered_at IS NULL))
BEGIN
	INSERT INTO call_hours (org_id, hour, status, calls, answered)
	VALUES (NEW.org_id, NEW.ended_at / 3600000, NEW.status, 1, NEW.answered_at IS NOT NULL)
	ON CONFLICT (org_id, hour, status) DO UPDATE SET calls = calls + 1, answered = answered + excluded.answered;
END;

CREATE TRIGGER call_hours_delete AFTER DELETE ON calls
WHEN OLD.ended_at IS NOT NULL AND OLD.status IN ('completed', 'failed', 'cancelled', 'no_answer', 'busy')
BEGIN
	UPDATE call_hours SET calls = calls - 1, answered = answered - (OLD.answered_at IS NOT NULL)
	WHERE org_id = OLD.org_id AND hour = OLD.ended_at / 3600000 AND status = OLD.status;
END;

-- The calls page's filters and the dashboard's counts answer from these:
-- by status (dial queue depth, active calls, the status filter) and by
-- agent, each in the page's order (created_at), so a filtered page reads
-- only its rows; by batch (batch progress in one pass in (batch, status)
-- order; the batch filter sorts its at most 1,000 calls).
CREATE INDEX calls_org_status ON calls (org_id, status, created_at);
CREATE INDEX calls_org_agent ON calls (org_id, agent_id, created_at);
CREATE INDEX calls_org_batch ON calls (org_id, batch_id, status, created_at) WHERE batch_id IS NOT NULL;

-- Knowledge sources waiting for or in processing, per organization.
CREATE INDEX kb_sources_org_status ON kb_sources (org_id, status);
