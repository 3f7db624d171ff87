-- PostgreSQL twin of ../0025_event_xid.sql (a no-op there: SQLite's single
-- writer commits events in seq order).
-- Writes no longer take one lock (issue 25), so seq no longer follows
-- commit order: a transaction may take seq 10 and commit after one that
-- took seq 11. Each event records the id of the transaction that wrote it;
-- readers order the log by (xid, seq) and read only events whose
-- transaction is older than every running one (xid < pg_snapshot_xmin), a
-- prefix of the log that no later commit can extend. Events logged before
-- this step get xid 1, below every real transaction id, and keep their seq
-- order.
ALTER TABLE events ADD COLUMN xid xid8 NOT NULL DEFAULT '1';
ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX events_org_xid ON events (org_id, xid, seq);
CREATE INDEX events_xid ON events (xid, seq);
-- A webhook endpoint's cursor becomes (cursor_xid, cursor): the last event
-- of the log, in that order, that its fan-out has passed.
ALTER TABLE webhook_endpoints ADD COLUMN cursor_xid xid8 NOT NULL DEFAULT '1';
-- The vector change log keeps seq in commit order instead: the in-memory
-- search mirrors follow it by seq (their mark is its newest seq), and its
-- writers are few (knowledge completions, listings syncs). Every statement
-- inserting into it first takes one advisory lock until its transaction
-- ends, before the rows take their seq: a transaction that logs after
-- another commits after it too.
CREATE FUNCTION agentd_vector_log_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock(7021368914170195566); -- "vector_log" order
	RETURN NULL;
END $$;
CREATE TRIGGER vector_log_order BEFORE INSERT ON vector_log
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_vector_log_order();
