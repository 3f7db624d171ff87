-- Nothing to do on SQLite: its wake-ups stay in the process. The step
-- exists so both dialects have the same migration numbers; see
-- postgres/0029_notify_rows.sql.
SELECT 1;
