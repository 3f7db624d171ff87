-- PostgreSQL twin of ../0014_kb_retry.sql: automatic retries of sources
-- that failed because the embedding service was unavailable.
ALTER TABLE kb_sources ADD COLUMN retries BIGINT NOT NULL DEFAULT 0;
ALTER TABLE kb_sources ADD COLUMN retry_at BIGINT;
CREATE INDEX kb_sources_retry ON kb_sources (retry_at) WHERE retry_at IS NOT NULL;
