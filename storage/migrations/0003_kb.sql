-- Knowledge base: collections, sources, chunks, full text and vectors.

CREATE TABLE kb_collections (
	id          TEXT PRIMARY KEY,
	org_id      TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	name        TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	UNIQUE (org_id, name)
);

-- A source is upserted by (collection_id, external_id). revision grows with
-- every content change: the worker's final write only lands when the
-- revision it read is still current, so a newer write always wins.
-- lease_owner/lease_until claim the source for one worker (of any process)
-- until the lease expires.
CREATE TABLE kb_sources (
	id           TEXT PRIMARY KEY,
	org_id       TEXT NOT NULL,
	collection_id TEXT NOT NULL REFERENCES kb_collections(id) ON DELETE CASCADE,
	external_id  TEXT NOT NULL,
	title        TEXT NOT NULL,
	content      TEXT NOT NULL,
	content_hash BLOB NOT NULL,
	metadata     TEXT NOT NULL DEFAULT '{}',
	content_role TEXT NOT NULL DEFAULT 'knowledge',
	status       TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
	chunk_count  INTEGER NOT NULL DEFAULT 0,
	file_size    INTEGER NOT NULL,
	error        TEXT,
	revision     INTEGER NOT NULL DEFAULT 1,
	queued_at    INTEGER NOT NULL,
	lease_owner  TEXT,
	lease_until  INTEGER,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	UNIQUE (collection_id, external_id)
);
CREATE INDEX kb_sources_list ON kb_sources (collection_id, created_at);
CREATE INDEX kb_sources_queue ON kb_sources (queued_at) WHERE status IN ('pending', 'processing');

-- Chunk ids are never reused (AUTOINCREMENT), so an in-memory vector mirror
-- can never confuse a new chunk with a deleted one.
CREATE TABLE kb_chunks (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	source_id     TEXT NOT NULL REFERENCES kb_sources(id) ON DELETE CASCADE,
	collection_id TEXT NOT NULL,
	chunk_index   INTEGER NOT NULL,
	heading_path  TEXT NOT NULL DEFAULT '[]',
	content       TEXT NOT NULL,
	tokens        INTEGER NOT NULL
);
CREATE INDEX kb_chunks_source ON kb_chunks (source_id, chunk_index);
CREATE INDEX kb_chunks_collection ON kb_chunks (collection_id);

-- BM25 over title + heading path + chunk text (rowid = kb_chunks.id). The
-- text lives in kb_chunks; the index keeps no copy.
CREATE VIRTUAL TABLE kb_chunks_fts USING fts5(
	body, content='', contentless_delete=1, tokenize='porter unicode61');

-- Generic vector store, shared by every feature (space "kb:<collectionId>",
-- "listings:<orgId>", ...). The embedder that made a space's vectors is
-- recorded with it; vectors are little-endian float32 blobs (the sqlite-vec
-- layout, so vec_distance_cosine works on them).
CREATE TABLE vector_spaces (
	space      TEXT PRIMARY KEY,
	embedder   TEXT NOT NULL,
	model      TEXT NOT NULL,
	dims       INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE TABLE vectors (
	vid     INTEGER PRIMARY KEY,
	space   TEXT NOT NULL,
	item_id INTEGER NOT NULL,
	vec     BLOB NOT NULL,
	UNIQUE (space, item_id)
);
-- Every vector change appends here so in-memory mirrors (in this or another
-- process) catch up by reading what changed since their last sequence
-- number; item_id NULL means the whole space changed.
CREATE TABLE vector_log (
	seq     INTEGER PRIMARY KEY AUTOINCREMENT,
	space   TEXT NOT NULL,
	item_id INTEGER
);
