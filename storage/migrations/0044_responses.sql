-- Responses of the OpenAI-compatible Responses API (issue 35): each stored
-- response keeps the whole context after it (messages, JSON of llm
-- messages: the caller's input, its function calls and their outputs, the
-- answer) so previous_response_id continues from there, and the
-- conversation its turns are appended to.
CREATE TABLE openai_responses (
	id              TEXT PRIMARY KEY,
	org_id          TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	agent_id        TEXT NOT NULL,
	conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	messages        TEXT NOT NULL,
	created_at      INTEGER NOT NULL
);
CREATE INDEX openai_responses_conversation ON openai_responses (conversation_id);
