-- A source that failed because the embedding service was unavailable is
-- tried again with backoff: retries counts the automatic attempts made so
-- far, retry_at is when the next one is due (NULL: none scheduled).
ALTER TABLE kb_sources ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE kb_sources ADD COLUMN retry_at INTEGER;
CREATE INDEX kb_sources_retry ON kb_sources (retry_at) WHERE retry_at IS NOT NULL;
