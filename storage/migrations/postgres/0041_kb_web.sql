-- PostgreSQL twin of ../0041_kb_web.sql. Web sources (issue 39): a page fetched from a URL, or a crawl of a site,
-- refreshed every refresh_ms (0: fetched once). A page's content lands in
-- kb_sources under external_id (the hash dedupe there decides whether it
-- is embedded again); a crawl's pages each land under their own URL.
-- etag/last_modified make a refresh a conditional GET; next_fetch_at is
-- when the worker fetches next (NULL: never), lease_owner/lease_until
-- claim the row for one worker of any process.
CREATE TABLE kb_web (
	id              TEXT PRIMARY KEY,
	org_id          TEXT NOT NULL,
	collection_id   TEXT NOT NULL REFERENCES kb_collections(id) ON DELETE CASCADE,
	kind            TEXT NOT NULL CHECK (kind IN ('page', 'crawl')),
	url             TEXT NOT NULL,
	external_id     TEXT NOT NULL,
	title           TEXT NOT NULL DEFAULT '',
	metadata        TEXT NOT NULL DEFAULT '{}',
	refresh_ms      BIGINT NOT NULL DEFAULT 0,
	crawl           TEXT,
	etag            TEXT NOT NULL DEFAULT '',
	last_modified   TEXT NOT NULL DEFAULT '',
	last_fetched_at BIGINT,
	last_error      TEXT,
	pages           BIGINT NOT NULL DEFAULT 0,
	next_fetch_at   BIGINT,
	lease_owner     TEXT,
	lease_until     BIGINT,
	created_at      BIGINT NOT NULL,
	updated_at      BIGINT NOT NULL,
	UNIQUE (collection_id, kind, external_id)
);
CREATE INDEX kb_web_due ON kb_web (next_fetch_at) WHERE next_fetch_at IS NOT NULL;
