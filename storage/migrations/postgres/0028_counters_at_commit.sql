-- Hot rows and locks moved to commit.
--
-- The counters kept by triggers on calls (agents' live/finished/completed
-- calls, call_hours) are a few hot rows: every status change of an
-- agent's calls updates that agent's row, every call ending in an hour the
-- hour's row. Fired with each UPDATE, a trigger took the row's lock at
-- once and held it through the rest of the transaction's round trips, so
-- every transaction of every process touching the same agent's calls
-- queued behind the others (dials through a 1 ms link: about 20 a second,
-- with one process or three). Deferred to commit, the same functions take
-- those locks only for the commit itself. Nothing reads the counters in
-- the transaction that moves them.
DROP TRIGGER calls_agent_stats_insert ON calls;
DROP TRIGGER calls_agent_stats_update ON calls;
DROP TRIGGER calls_agent_stats_delete ON calls;
CREATE CONSTRAINT TRIGGER calls_agent_stats_insert AFTER INSERT ON calls
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
	WHEN (NEW.status IN ('queued', 'connecting', 'ringing', 'active', 'completed', 'failed', 'no_answer', 'busy'))
	EXECUTE FUNCTION calls_agent_stats();
CREATE CONSTRAINT TRIGGER calls_agent_stats_update AFTER UPDATE OF status, agent_id ON calls
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
	WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.agent_id IS DISTINCT FROM NEW.agent_id)
	EXECUTE FUNCTION calls_agent_stats();
CREATE CONSTRAINT TRIGGER calls_agent_stats_delete AFTER DELETE ON calls
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION calls_agent_stats();

DROP TRIGGER call_hours_insert ON calls;
DROP TRIGGER call_hours_update ON calls;
DROP TRIGGER call_hours_delete ON calls;
-- The WHENs skip the calls the function would leave alone (not ended, or
-- a change it does not count), so a batch of new calls or a progress step
-- queues no event for the commit.
CREATE CONSTRAINT TRIGGER call_hours_insert AFTER INSERT ON calls
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.ended_at IS NOT NULL)
	EXECUTE FUNCTION call_hours_count();
CREATE CONSTRAINT TRIGGER call_hours_update AFTER UPDATE OF org_id, status, ended_at, answered_at ON calls
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
	WHEN ((OLD.ended_at IS NOT NULL OR NEW.ended_at IS NOT NULL) AND (OLD.org_id IS DISTINCT FROM NEW.org_id
		OR OLD.status IS DISTINCT FROM NEW.status OR OLD.ended_at IS DISTINCT FROM NEW.ended_at
		OR (OLD.answered_at IS NULL) != (NEW.answered_at IS NULL)))
	EXECUTE FUNCTION call_hours_count();
CREATE CONSTRAINT TRIGGER call_hours_delete AFTER DELETE ON calls
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION call_hours_count();

-- The vector change log's order (0025) the same way: its seq must follow
-- commit order (the search mirrors follow it by seq), so every insert took
-- one advisory lock and held it to the end of the transaction, and source
-- upserts and knowledge completions of every process queued on it. Now a
-- row takes a provisional seq when inserted and its final one at commit,
-- under the lock, which is then held only for the commit itself.
DROP TRIGGER vector_log_order ON vector_log;
CREATE FUNCTION agentd_vector_log_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock(7021368914170195566); -- "vector_log" order
	UPDATE vector_log SET seq = nextval(pg_get_serial_sequence('vector_log', 'seq')) WHERE seq = NEW.seq;
	RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER vector_log_commit AFTER INSERT ON vector_log
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agentd_vector_log_commit();
