-- Organizations, their users and API keys. Times are integer milliseconds
-- since the Unix epoch (UTC).
CREATE TABLE orgs (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);

CREATE TABLE users (
	id         TEXT PRIMARY KEY,
	org_id     TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	email      TEXT NOT NULL COLLATE NOCASE,
	role       TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
	created_at INTEGER NOT NULL,
	UNIQUE (org_id, email)
);

-- A key is stored as the SHA-256 of its secret; removing its creator removes it.
CREATE TABLE api_keys (
	id           TEXT PRIMARY KEY,
	org_id       TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	prefix       TEXT NOT NULL,
	hash         BLOB NOT NULL UNIQUE,
	rate_limit   INTEGER NOT NULL,
	expires_at   INTEGER,
	revoked_at   INTEGER,
	created_at   INTEGER NOT NULL
);
CREATE INDEX api_keys_org ON api_keys (org_id, created_at);

-- auth_epoch changes with every change that can invalidate a cached key
-- lookup, so caches in any process notice at once.
CREATE TABLE auth_epoch (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT INTO auth_epoch (id, n) VALUES (1, 0);

CREATE TRIGGER users_epoch_del AFTER DELETE ON users BEGIN UPDATE auth_epoch SET n = n + 1; END;
CREATE TRIGGER users_epoch_upd AFTER UPDATE ON users BEGIN UPDATE auth_epoch SET n = n + 1; END;
CREATE TRIGGER keys_epoch_ins AFTER INSERT ON api_keys BEGIN UPDATE auth_epoch SET n = n + 1; END;
CREATE TRIGGER keys_epoch_del AFTER DELETE ON api_keys BEGIN UPDATE auth_epoch SET n = n + 1; END;
CREATE TRIGGER keys_epoch_upd AFTER UPDATE ON api_keys BEGIN UPDATE auth_epoch SET n = n + 1; END;
CREATE TRIGGER orgs_epoch_del AFTER DELETE ON orgs BEGIN UPDATE auth_epoch SET n = n + 1; END;
