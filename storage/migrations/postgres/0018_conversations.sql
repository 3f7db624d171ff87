-- PostgreSQL twin of ../0018_conversations.sql.
-- Conversations (app/conversations): an agent's chats through the API, the
-- OpenAI-compatible endpoint (voice workers) or the widget. A turn writes
-- the user message and the answer in one transaction, so a failed turn
-- leaves nothing half-done. call_id ties a voice conversation to its call
-- (x-agentd-call-id): one conversation per call.
CREATE TABLE conversations (
	id            TEXT PRIMARY KEY,
	org_id        TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	agent_id      TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	channel       TEXT NOT NULL CHECK (channel IN ('api', 'widget', 'voice')),
	status        TEXT NOT NULL CHECK (status IN ('active', 'ended')),
	call_id       TEXT,
	metadata      TEXT NOT NULL DEFAULT '{}',
	message_count INTEGER NOT NULL DEFAULT 0,
	created_at    BIGINT NOT NULL,
	updated_at    BIGINT NOT NULL,
	ended_at      BIGINT
);
CREATE INDEX conversations_org_created ON conversations (org_id, created_at DESC, id);
CREATE UNIQUE INDEX conversations_call ON conversations (org_id, call_id) WHERE call_id IS NOT NULL;

CREATE TABLE conversation_messages (
	id              TEXT PRIMARY KEY,
	conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	seq             INTEGER NOT NULL,
	role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
	content         TEXT NOT NULL,
	citations       TEXT NOT NULL DEFAULT '[]',
	tool_calls      TEXT NOT NULL DEFAULT '[]',
	usage           TEXT,
	created_at      BIGINT NOT NULL,
	UNIQUE (conversation_id, seq)
);

-- The per-organization secret url tools are signed with (Standard
-- Webhooks); its own column so it can be encrypted at rest later.
CREATE TABLE org_tools_secrets (
	org_id     TEXT PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
	secret     TEXT NOT NULL,
	created_at BIGINT NOT NULL
);

-- An agent's knowledge {collectionIds, topK, listings} (JSON) and fallback
-- answer; NULL when never set, so existing agents read as before.
ALTER TABLE agents ADD COLUMN knowledge TEXT;
ALTER TABLE agents ADD COLUMN fallback TEXT;
