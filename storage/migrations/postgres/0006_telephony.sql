-- PostgreSQL twin of ../0006_telephony.sql.
CREATE TABLE call_results (
	call_id    TEXT PRIMARY KEY REFERENCES calls(id) ON DELETE CASCADE,
	summary    TEXT,
	transcript TEXT,
	outcome    TEXT,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
