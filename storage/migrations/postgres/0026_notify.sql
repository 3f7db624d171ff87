-- Wake-ups across processes (storage/sqldb/listen.go): triggers send
-- pg_notify inside the writing transaction, so a notification goes out
-- only if it commits, and PostgreSQL folds identical ones (same channel,
-- empty payload) into one per transaction. Each process's listener wakes
-- its workers and drops its auth cache on them.
CREATE FUNCTION agentd_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify(TG_ARGV[0], '');
	RETURN NULL;
END $$;

-- Auth: wherever the epoch moves (users, keys, organizations).
CREATE OR REPLACE FUNCTION auth_epoch_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE auth_epoch SET n = n + 1;
	PERFORM pg_notify('agentd_auth', '');
	RETURN NULL;
END $$;

-- Calls: new ones (the scheduler), and rows that enter a waiting state or
-- move their due time (scheduler and dial queue). A claim or a progress
-- step matches no WHEN and costs nothing.
CREATE TRIGGER calls_notify_ins AFTER INSERT ON calls
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_notify('agentd_calls');
CREATE TRIGGER calls_notify_upd AFTER UPDATE OF status, due_at ON calls FOR EACH ROW
	WHEN (NEW.status IN ('initiated', 'scheduled', 'queued')
		AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.due_at IS DISTINCT FROM NEW.due_at))
	EXECUTE FUNCTION agentd_notify('agentd_calls');
-- A batch resumed: its calls become claimable again.
CREATE TRIGGER call_batches_notify AFTER UPDATE OF status ON call_batches FOR EACH ROW
	WHEN (OLD.status = 'paused' AND NEW.status <> 'paused')
	EXECUTE FUNCTION agentd_notify('agentd_calls');

-- Events: the webhook worker's fan-out and the event streams.
CREATE TRIGGER events_notify AFTER INSERT ON events
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_notify('agentd_events');

-- Webhook deliveries queued (fan-out, a test, a redelivery) or set for a
-- retry.
CREATE TRIGGER webhook_deliveries_notify_ins AFTER INSERT ON webhook_deliveries
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_notify('agentd_deliveries');
CREATE TRIGGER webhook_deliveries_notify_upd AFTER UPDATE OF status, next_attempt_at ON webhook_deliveries FOR EACH ROW
	WHEN (NEW.status = 'pending' AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.next_attempt_at IS DISTINCT FROM NEW.next_attempt_at))
	EXECUTE FUNCTION agentd_notify('agentd_deliveries');

-- Knowledge sources queued for chunking and embedding (new, re-uploaded,
-- reindexed, or a failed one whose retry fell due).
CREATE TRIGGER kb_sources_notify_ins AFTER INSERT ON kb_sources
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_notify('agentd_kb');
CREATE TRIGGER kb_sources_notify_upd AFTER UPDATE OF status, queued_at ON kb_sources FOR EACH ROW
	WHEN (NEW.status = 'pending' AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.queued_at IS DISTINCT FROM NEW.queued_at))
	EXECUTE FUNCTION agentd_notify('agentd_kb');

-- Post-call analyses queued, or set for a retry.
CREATE TRIGGER analyses_notify_ins AFTER INSERT ON analyses
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_notify('agentd_analyses');
CREATE TRIGGER analyses_notify_upd AFTER UPDATE OF status, due_at ON analyses FOR EACH ROW
	WHEN (NEW.status = 'pending' AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.due_at IS DISTINCT FROM NEW.due_at))
	EXECUTE FUNCTION agentd_notify('agentd_analyses');
