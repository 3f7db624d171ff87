-- PostgreSQL twin of ../0011_kb_search_alpha.sql.
ALTER TABLE kb_collections ADD COLUMN search_alpha DOUBLE PRECISION;
