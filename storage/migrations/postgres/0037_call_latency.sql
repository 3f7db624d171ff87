-- PostgreSQL twin of ../0037_call_latency.sql.
CREATE TABLE call_latency (
	call_id    TEXT PRIMARY KEY REFERENCES calls(id) ON DELETE CASCADE,
	turns      TEXT NOT NULL,
	p50_ms     BIGINT NOT NULL,
	p95_ms     BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
