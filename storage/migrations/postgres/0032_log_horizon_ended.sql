-- The event log's horizon (sqldb.LogHorizon) is the lowest transaction id
-- a read's snapshot saw running, leaving out those pg_stat_activity shows
-- in other databases or background processes. A transaction that ended
-- between the snapshot and the look at pg_stat_activity is not shown at
-- all, and was counted: with several databases on one cluster (CI's
-- packages) a fan-out right after an event was logged could find nothing.
-- agentd_log_holds(x) says whether such a transaction must still hold the
-- log back: only if it wrote events here, which a query of its own, with a
-- snapshot taken now (READ COMMITTED; the function is VOLATILE), sees. At
-- REPEATABLE READ or SERIALIZABLE the transaction's snapshot is the read's
-- own, so it cannot tell, and holds. A transaction still in progress but
-- in no backend (a prepared transaction) holds too.
CREATE FUNCTION agentd_log_holds(x xid8) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	IF current_setting('transaction_isolation') <> 'read committed' OR pg_xact_status(x) = 'in progress' THEN
		RETURN true;
	END IF;
	RETURN EXISTS (SELECT 1 FROM events WHERE xid = x);
END $$;
