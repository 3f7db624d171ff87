-- An agent's call counters move only when a call crosses between the
-- groups they count (live, finished, completed). A dialled call's steps
-- inside the live group (queued -> connecting -> ringing -> active) each
-- queued a trigger event that updated the agent's row twice at commit
-- (minus the old status, plus the new): ten writes of one hot row per
-- dialled call, where two change a count. Now the update trigger fires
-- only for a change of group or agent, and moves the counts of an agent
-- that stays in one UPDATE.
CREATE OR REPLACE FUNCTION calls_agent_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'UPDATE' AND OLD.agent_id IS NOT DISTINCT FROM NEW.agent_id THEN
		UPDATE agents SET
			live_calls = live_calls - (OLD.status IN ('queued', 'connecting', 'ringing', 'active'))::int
				+ (NEW.status IN ('queued', 'connecting', 'ringing', 'active'))::int,
			finished_calls = finished_calls - (OLD.status IN ('completed', 'failed', 'no_answer', 'busy'))::int
				+ (NEW.status IN ('completed', 'failed', 'no_answer', 'busy'))::int,
			completed_calls = completed_calls - (OLD.status = 'completed')::int + (NEW.status = 'completed')::int
		WHERE id = NEW.agent_id;
		RETURN NULL;
	END IF;
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

DROP TRIGGER calls_agent_stats_update ON calls;
CREATE CONSTRAINT TRIGGER calls_agent_stats_update AFTER UPDATE OF status, agent_id ON calls
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
	WHEN (OLD.agent_id IS DISTINCT FROM NEW.agent_id
		OR (OLD.status IN ('queued', 'connecting', 'ringing', 'active')) IS DISTINCT FROM (NEW.status IN ('queued', 'connecting', 'ringing', 'active'))
		OR (OLD.status IN ('completed', 'failed', 'no_answer', 'busy')) IS DISTINCT FROM (NEW.status IN ('completed', 'failed', 'no_answer', 'busy'))
		OR (OLD.status = 'completed') IS DISTINCT FROM (NEW.status = 'completed'))
	EXECUTE FUNCTION calls_agent_stats();
