-- Listings: structured rows synced in bulk, upserted by (org_id, external_id).
-- The integer rowid is the listing's id in the vector index; uid is the
-- public UUID. category '' means "no category". price_cents is the exact
-- price in hundredths (NULL when the listing has no price). hash covers every
-- stored field, so an identical re-sync is recognised without a write;
-- embed_hash covers only the embedded text, so a change that does not alter
-- it does not call the embedder.
CREATE TABLE listings (
	id          INTEGER PRIMARY KEY,
	uid         TEXT NOT NULL UNIQUE,
	org_id      TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
	external_id TEXT NOT NULL,
	title       TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	category    TEXT NOT NULL DEFAULT '',
	price_cents INTEGER,
	currency    TEXT NOT NULL DEFAULT 'EUR',
	attributes  TEXT NOT NULL DEFAULT '{}',
	source_url  TEXT NOT NULL DEFAULT '',
	hash        BLOB NOT NULL,
	embed_hash  BLOB,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	UNIQUE (org_id, external_id)
);
CREATE INDEX listings_category ON listings (org_id, category, external_id);
CREATE INDEX listings_newest ON listings (org_id, created_at DESC, id DESC);
CREATE INDEX listings_price ON listings (org_id, price_cents);

-- listing_attrs is the attribute index: one row per (key, value) of a
-- listing, value in its normalised text form (lower-cased strings, numbers
-- in shortest decimal form, true/false; one row per array element), so an
-- equality filter is an index lookup rather than a scan.
CREATE TABLE listing_attrs (
	org_id     TEXT NOT NULL,
	key        TEXT NOT NULL,
	value      TEXT NOT NULL,
	listing_id INTEGER NOT NULL REFERENCES listings(id) ON DELETE CASCADE,
	PRIMARY KEY (org_id, key, value, listing_id)
) WITHOUT ROWID;
CREATE INDEX listing_attrs_listing ON listing_attrs (listing_id);

-- listings_fts is the keyword side of hybrid listing search (BM25), keyed by
-- the listing rowid and written with the listing in the same transaction.
-- org holds the organization id as one token, so a search matches within
-- one organization inside FTS5 itself (no join that would rerun the query
-- per row); rank weighs the title most and ignores org.
CREATE VIRTUAL TABLE listings_fts USING fts5 (
	org, title, description, category, attrs,
	content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO listings_fts (listings_fts, rank) VALUES ('rank', 'bm25(0.0, 4.0, 1.0, 2.0, 1.5)');
