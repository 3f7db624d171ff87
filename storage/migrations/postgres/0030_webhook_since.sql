-- An endpoint receives the events logged after it was created (or
-- re-enabled). Its cursor starts at the log's horizon, which leaves out
-- every event whose transaction ended before every running one; an event
-- committed before the endpoint but behind an older transaction still
-- running was ahead of that cursor and was sent (a flaky test in CI, with
-- autovacuum's transaction as the older one). The snapshot taken when the
-- cursor was set tells those events apart: the fan-out skips an event
-- whose transaction it shows as committed (the transaction that set it
-- logs no event of its own, and is named too, to be sure).
ALTER TABLE webhook_endpoints ADD COLUMN since_snapshot pg_snapshot;
ALTER TABLE webhook_endpoints ADD COLUMN since_xid xid8;
