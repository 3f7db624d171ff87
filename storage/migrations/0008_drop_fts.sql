-- Knowledge keyword search runs on an in-memory BM25 mirror
-- (storage/search) that reads the text from kb_chunks: kb_chunks_fts is no
-- longer read, so it is no longer written either.
DROP TABLE kb_chunks_fts;
