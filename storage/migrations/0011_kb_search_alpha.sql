-- A collection may set how far its hybrid search trusts the semantic half
-- (0 keyword only, 1 semantic only); NULL keeps the embedder's default.
ALTER TABLE kb_collections ADD COLUMN search_alpha REAL;
