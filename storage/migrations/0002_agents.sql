-- Agents (voice or chat) of an organization. JSON columns hold the
-- validated config, tools and phone numbers.
CREATE TABLE agents (
	id            TEXT PRIMARY KEY,
	org_id        TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	name          TEXT NOT NULL,
	type          TEXT NOT NULL CHECK (type IN ('voice', 'chat')),
	status        TEXT NOT NULL CHECK (status IN ('active', 'inactive', 'training', 'deployed')),
	model         TEXT NOT NULL DEFAULT '',
	instructions  TEXT NOT NULL DEFAULT '',
	config        TEXT NOT NULL DEFAULT '{}',
	tools         TEXT NOT NULL DEFAULT '[]',
	phone_numbers TEXT NOT NULL DEFAULT '[]',
	specialty     TEXT NOT NULL DEFAULT '',
	display_role  TEXT NOT NULL DEFAULT '',
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL
);
CREATE INDEX agents_org_created ON agents (org_id, created_at DESC, id);
