-- Nothing to do on SQLite: its counter trigger fires under the single
-- writer's lock, not on a hot row held to commit. See
-- postgres/0031_agent_stats_groups.sql.
SELECT 1;
