-- PostgreSQL twin of ../0016_shared_limits.sql: the dial budget per trunk
-- and the per-key request buckets every process on the database shares.
CREATE TABLE dial_budget (
	trunk   TEXT PRIMARY KEY,
	next_us BIGINT NOT NULL
);

CREATE TABLE rate_buckets (
	key_id TEXT NOT NULL,
	bucket BIGINT NOT NULL,
	n      INTEGER NOT NULL,
	PRIMARY KEY (key_id, bucket)
);
