-- New calls scheduled a minute or more ahead wake no process. Every insert
-- of calls notified agentd_calls, and every process's scheduler and dial
-- queue then read the next due times, for a campaign scheduled for
-- tomorrow as much as for a call due now: three processes took in three
-- times the reads of one. The scheduler polls at least every 30 s
-- (sqldb.WakePoll) and then sleeps until the earliest due call, so a call
-- due a minute or more ahead is seen in time without a wake-up. Any other
-- new call (due sooner, to be queued, inbound...) still notifies.
CREATE FUNCTION agentd_notify_calls() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM new_rows WHERE status <> 'scheduled' OR due_at IS NULL
			OR due_at < (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 60000) THEN
		PERFORM pg_notify('agentd_calls', '');
	END IF;
	RETURN NULL;
END $$;

DROP TRIGGER calls_notify_ins ON calls;
CREATE TRIGGER calls_notify_ins AFTER INSERT ON calls REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION agentd_notify_calls();
