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
