-- PostgreSQL twin of ../0013_dashboard.sql: hourly call outcomes kept by
-- one trigger function on calls, equal to a recount over calls.
CREATE TABLE call_hours (
	org_id   TEXT NOT NULL,
	hour     BIGINT NOT NULL,
	status   TEXT NOT NULL,
	calls    BIGINT NOT NULL DEFAULT 0,
	answered BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (org_id, hour, status)
);

INSERT INTO call_hours (org_id, hour, status, calls, answered)
	SELECT org_id, ended_at / 3600000, status, count(*), count(answered_at) FROM calls
	WHERE ended_at IS NOT NULL AND status IN ('completed', 'failed', 'cancelled', 'no_answer', 'busy')
	GROUP BY org_id, ended_at / 3600000, status;

CREATE FUNCTION call_hours_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'UPDATE' AND NOT (OLD.org_id IS DISTINCT FROM NEW.org_id OR OLD.status IS DISTINCT FROM NEW.status
		OR OLD.ended_at IS DISTINCT FROM NEW.ended_at OR (OLD.answered_at IS NULL) != (NEW.answered_at IS NULL)) THEN
		RETURN NULL;
	END IF;
	IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.ended_at IS NOT NULL
		AND OLD.status IN ('completed', 'failed', 'cancelled', 'no_answer', 'busy') THEN
		UPDATE call_hours SET calls = calls - 1, answered = answered - (OLD.answered_at IS NOT NULL)::int
		WHERE org_id = OLD.org_id AND hour = OLD.ended_at / 3600000 AND status = OLD.status;
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.ended_at IS NOT NULL
		AND NEW.status IN ('completed', 'failed', 'cancelled', 'no_answer', 'busy') THEN
		INSERT INTO call_hours (org_id, hour, status, calls, answered)
		VALUES (NEW.org_id, NEW.ended_at / 3600000, NEW.status, 1, (NEW.answered_at IS NOT NULL)::int)
		ON CONFLICT (org_id, hour, status) DO UPDATE
			SET calls = call_hours.calls + 1, answered = call_hours.answered + excluded.answered;
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER call_hours_insert AFTER INSERT ON calls
	FOR EACH ROW EXECUTE FUNCTION call_hours_count();
CREATE TRIGGER call_hours_update AFTER UPDATE OF org_id, status, ended_at, answered_at ON calls
	FOR EACH ROW EXECUTE FUNCTION call_hours_count();
CREATE TRIGGER call_hours_delete AFTER DELETE ON calls
	FOR EACH ROW EXECUTE FUNCTION call_hours_count();

CREATE INDEX calls_org_status ON calls (org_id, status, created_at);
CREATE INDEX calls_org_agent ON calls (org_id, agent_id, created_at);
CREATE INDEX calls_org_batch ON calls (org_id, batch_id, status, created_at) WHERE batch_id IS NOT NULL;

CREATE INDEX kb_sources_org_status ON kb_sources (org_id, status);
