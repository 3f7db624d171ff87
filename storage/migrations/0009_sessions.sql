-- Dashboard sign-in: a password per user (argon2id, encoded with its
-- parameters), sessions stored as the SHA-256 of their id, one-time setup
-- tokens, and failed sign-ins for throttling across processes.
ALTER TABLE users ADD COLUMN password_hash TEXT;

CREATE TABLE sessions (
	id_hash      BLOB PRIMARY KEY,
	user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	csrf_token   TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	last_seen_at INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE setup_tokens (
	token_hash BLOB PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE login_failures (
	scope TEXT NOT NULL,   -- "email:<address>" or "addr:<client address>"
	at    INTEGER NOT NULL
);
CREATE INDEX login_failures_scope ON login_failures (scope, at);
