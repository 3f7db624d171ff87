-- Nothing to do on SQLite: its event log has no horizon. See
-- postgres/0032_log_horizon_ended.sql.
SELECT 1;
