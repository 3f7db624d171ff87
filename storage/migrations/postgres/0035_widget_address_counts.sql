-- The chat widget's per-address share of an agent's day (issue 32): one
-- address (an IPv6 client by its /64) may use at most a share of
-- config.maxMessagesPerDay, so a single client cannot spend the whole day
-- for every visitor. Counted in the database like widget_daily_counts, so
-- the share holds across processes; days before yesterday are pruned.
CREATE TABLE widget_address_counts (
	agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	day      TEXT NOT NULL,
	address  TEXT NOT NULL,
	count    BIGINT NOT NULL,
	PRIMARY KEY (agent_id, day, address)
);
CREATE INDEX widget_address_counts_day ON widget_address_counts (day);
