-- PostgreSQL twin of ../0015_agent_stats_insert_when.sql: a call stored in
-- a state the agent counters ignore (initiated, scheduled) skips the
-- trigger instead of adding zeros to its agent row.
DROP TRIGGER calls_agent_stats_insert ON calls;
CREATE TRIGGER calls_agent_stats_insert AFTER INSERT ON calls
	FOR EACH ROW
	WHEN (NEW.status IN ('queued', 'connecting', 'ringing', 'active', 'completed', 'failed', 'no_answer', 'busy'))
	EXECUTE FUNCTION calls_agent_stats();
