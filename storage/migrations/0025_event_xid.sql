-- Nothing to do on SQLite: its single writer commits events in seq order.
-- The step exists so both dialects have the same migration numbers; see
-- postgres/0025_event_xid.sql.
SELECT 1;
