-- PostgreSQL twin of ../0009_sessions.sql.
ALTER TABLE users ADD COLUMN password_hash TEXT;

CREATE TABLE sessions (
	id_hash      BYTEA PRIMARY KEY,
	user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	csrf_token   TEXT NOT NULL,
	created_at   BIGINT NOT NULL,
	last_seen_at BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE setup_tokens (
	token_hash BYTEA PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	expires_at BIGINT NOT NULL
);

CREATE TABLE login_failures (
	scope TEXT NOT NULL,
	at    BIGINT NOT NULL
);
CREATE INDEX login_failures_scope ON login_failures (scope, at);
