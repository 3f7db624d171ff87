-- PostgreSQL twin of ../0010_drop_fts.sql: the FTS5 tables it drops were
-- never created here. Kept so both directories number the same steps.
SELECT 1;
