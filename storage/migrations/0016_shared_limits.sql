-- Limits every agentd process on this database shares, so N processes
-- dial and admit as one service, not N times over.
--
-- dial_budget: per trunk (the dialer's name), when the next outbound call
-- may start, in microseconds since the epoch (milliseconds would round a
-- 30 CPS interval by 3%). A claim takes the slot and moves it on by the
-- interval; see callstore.Budget.
CREATE TABLE dial_budget (
	trunk   TEXT PRIMARY KEY,
	next_us INTEGER NOT NULL
) WITHOUT ROWID;

-- rate_buckets: API requests admitted per key and time bucket (a sixtieth
-- of the rate-limit window), read by the shared rate limit of processes on
-- PostgreSQL; see orgstore.AdmitRate.
CREATE TABLE rate_buckets (
	key_id TEXT NOT NULL,
	bucket INTEGER NOT NULL,
	n      INTEGER NOT NULL,
	PRIMARY KEY (key_id, bucket)
) WITHOUT ROWID;
