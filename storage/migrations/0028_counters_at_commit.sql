-- Nothing to do on SQLite: its single writer holds no row lock across
-- round trips. The step exists so both dialects have the same migration
-- numbers; see postgres/0028_counters_at_commit.sql.
SELECT 1;
