-- PostgreSQL twin of ../0007_agent_stats.sql: per-agent call counters kept
-- by one trigger function on calls.
UPDATE agents SET
	live_calls = (SELECT count(*) FROM calls c WHERE c.agent_id = agents.id
		AND c.status IN ('queued', 'connecting', 'ringing', 'active')),
	finished_calls = (SELECT count(*) FROM calls c WHERE c.agent_id = agents.id
		AND c.status IN ('completed', 'failed', 'no_answer', 'busy')),
	completed_calls = (SELECT count(*) FROM calls c WHERE c.agent_id = agents.id
		AND c.status = 'completed');

CREATE FUNCTION calls_agent_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP IN ('UPDATE', 'DELETE') THEN
		UPDATE agents SET
			live_calls = live_calls - (OLD.status IN ('queued', 'connecting', 'ringing', 'active'))::int,
			finished_calls = finished_calls - (OLD.status IN ('completed', 'failed', 'no_answer', 'busy'))::int,
			completed_calls = completed_calls - (OLD.status = 'completed')::int
		WHERE id = OLD.agent_id;
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') THEN
		UPDATE agents SET
			live_calls = live_calls + (NEW.status IN ('queued', 'connecting', 'ringing', 'active'))::int,
			finished_calls = finished_calls + (NEW.status IN ('completed', 'failed', 'no_answer', 'busy'))::int,
			completed_calls = completed_calls + (NEW.status = 'completed')::int
		WHERE id = NEW.agent_id;
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER calls_agent_stats_insert AFTER INSERT ON calls
	FOR EACH ROW EXECUTE FUNCTION calls_agent_stats();
CREATE TRIGGER calls_agent_stats_update AFTER UPDATE OF status, agent_id ON calls
	FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.agent_id IS DISTINCT FROM NEW.agent_id)
	EXECUTE FUNCTION calls_agent_stats();
CREATE TRIGGER calls_agent_stats_delete AFTER DELETE ON calls
	FOR EACH ROW EXECUTE FUNCTION calls_agent_stats();
