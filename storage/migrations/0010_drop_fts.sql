-- Keyword search runs on in-memory BM25 mirrors (storage/search) that read
-- the text from kb_chunks and listings: the FTS5 tables are no longer read,
-- so they are no longer written either. vector_log stays the change log of
-- every mirror: listing writes log their rows under 'listing-text:<orgId>'.
DROP TABLE kb_chunks_fts;
DROP TABLE listings_fts;
