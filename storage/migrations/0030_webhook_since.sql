-- Nothing to do on SQLite: an endpoint's cursor there is the newest seq,
-- exact under its single writer. See postgres/0030_webhook_since.sql.
SELECT 1;
