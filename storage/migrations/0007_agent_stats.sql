-- Per-agent call counters for the workforce view (GET /api/v2/agents),
-- kept by triggers on calls so the list never scans the calls table.
-- A call counts as live while queued, connecting, ringing or active; as
-- finished once completed, failed, no_answer or busy; completed calls are
-- the successful ones. Other states (initiated, scheduled, cancelled) count
-- nowhere. Runs after 0005_calls.sql, which creates calls.

UPDATE agents SET
	live_calls = (SELECT count(*) FROM calls c WHERE c.agent_id = agents.id
		AND c.status IN ('queued', 'connecting', 'ringing', 'active')),
	finished_calls = (SELECT count(*) FROM calls c WHERE c.agent_id = agents.id
		AND c.status IN ('completed', 'failed', 'no_answer', 'busy')),
	completed_calls = (SELECT count(*) FROM calls c WHERE c.agent_id = agents.id
		AND c.status = 'completed');

CREATE TRIGGER calls_agent_stats_insert AFTER INSERT ON calls
BEGIN
	UPDATE agents SET
		live_calls = live_calls + (NEW.status IN ('queued', 'connecting', 'ringing', 'active')),
		finished_calls = finished_calls + (NEW.status IN ('completed', 'failed', 'no_answer', 'busy')),
		completed_calls = completed_calls + (NEW.status = 'completed')
	WHERE id = NEW.agent_id;
END;

CREATE TRIGGER calls_agent_stats_update AFTER UPDATE OF status, agent_id ON calls
WHEN OLD.status IS NOT NEW.status OR OLD.agent_id IS NOT NEW.agent_id
BEGIN
	UPDATE agents SET
		live_calls = live_calls - (OLD.status IN ('queued', 'connecting', 'ringing', 'active')),
		finished_calls = finished_calls - (OLD.status IN ('completed', 'failed', 'no_answer', 'busy')),
		completed_calls = completed_calls - (OLD.status = 'completed')
	WHERE id = OLD.agent_id;
	UPDATE agents SET
		live_calls = live_calls + (NEW.status IN ('queued', 'connecting', 'ringing', 'active')),
		finished_calls = finished_calls + (NEW.status IN ('completed', 'failed', 'no_answer', 'busy')),
		completed_calls = completed_calls + (NEW.status = 'completed')
	WHERE id = NEW.agent_id;
END;

CREATE TRIGGER calls_agent_stats_delete AFTER DELETE ON calls
BEGIN
	UPDATE agents SET
		live_calls = live_calls - (OLD.status IN ('queued', 'connecting', 'ringing', 'active')),
		finished_calls = finished_calls - (OLD.status IN ('completed', 'failed', 'no_answer', 'busy')),
		completed_calls = completed_calls - (OLD.status = 'completed')
	WHERE id = OLD.agent_id;
END;
