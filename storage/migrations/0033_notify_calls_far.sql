-- Nothing to do on SQLite: it has no NOTIFY. See
-- postgres/0033_notify_calls_far.sql.
SELECT 1;
