-- The statement-level wake-up triggers of 0026 fired for every INSERT,
-- also one that inserted nothing: the end of every call runs the
-- analysis queue's INSERT ... SELECT, which inserts a row only when the
-- agent has an analysis plan, and each of those woke the analysis worker
-- of every process for two reads. Now they notify only when the statement
-- inserted rows (its transition table is not empty).
CREATE FUNCTION agentd_notify_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM new_rows) THEN
		PERFORM pg_notify(TG_ARGV[0], '');
	END IF;
	RETURN NULL;
END $$;

DROP TRIGGER calls_notify_ins ON calls;
CREATE TRIGGER calls_notify_ins AFTER INSERT ON calls REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_notify_rows('agentd_calls');
DROP TRIGGER events_notify ON events;
CREATE TRIGGER events_notify AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_notify_rows('agentd_events');
DROP TRIGGER webhook_deliveries_notify_ins ON webhook_deliveries;
CREATE TRIGGER webhook_deliveries_notify_ins AFTER INSERT ON webhook_deliveries REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_notify_rows('agentd_deliveries');
DROP TRIGGER kb_sources_notify_ins ON kb_sources;
CREATE TRIGGER kb_sources_notify_ins AFTER INSERT ON kb_sources REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_notify_rows('agentd_kb');
DROP TRIGGER analyses_notify_ins ON analyses;
CREATE TRIGGER analyses_notify_ins AFTER INSERT ON analyses REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_notify_rows('agentd_analyses');
