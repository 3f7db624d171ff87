-- PostgreSQL twin of ../0016_shared_limits.sql: the dial budget per trunk
-- and the per-key request buckets every process on the database shares.
CREATE TABLE dial_budget (
	trunk   TEXT PRIMARY KEY,
	next_us BIGINT NOT NULL
);

CREATE TABLE rate_buckets (
	key_id TEXT NOT NULL,
	bucket BIGINT NOT NULL,
	n      INTEGER NOT NULL,
	PRIMARY KEY (key_id, bucket)
);

-- One request's admission in one round trip (orgstore.AdmitRate): under
-- an advisory lock of the key (the two-key class 'agnt', never the global
-- write lock), count the key's buckets from p_first on, drop older ones,
-- and count this request in p_bucket when fewer than p_limit were. A
-- VOLATILE function's statements each see what committed before them, so
-- the count after the lock is exact.
CREATE FUNCTION agentd_admit(p_key TEXT, p_bucket BIGINT, p_first BIGINT, p_limit INTEGER, p_lock INTEGER)
RETURNS TABLE (ok BOOLEAN, used INTEGER, oldest BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_used INTEGER;
	v_oldest BIGINT;
	v_stale BIGINT;
BEGIN
	PERFORM pg_advisory_xact_lock(1634168436, p_lock);
	SELECT coalesce(sum(b.n) FILTER (WHERE b.bucket >= p_first), 0), min(b.bucket) FILTER (WHERE b.bucket >= p_first),
		min(b.bucket) INTO v_used, v_oldest, v_stale FROM rate_buckets b WHERE b.key_id = p_key;
	IF v_stale < p_first THEN
		DELETE FROM rate_buckets b WHERE b.key_id = p_key AND b.bucket < p_first;
	END IF;
	IF v_used >= p_limit THEN
		RETURN QUERY SELECT false, v_used, v_oldest;
		RETURN;
	END IF;
	INSERT INTO rate_buckets AS b (key_id, bucket, n) VALUES (p_key, p_bucket, 1)
		ON CONFLICT (key_id, bucket) DO UPDATE SET n = b.n + 1;
	RETURN QUERY SELECT true, v_used, v_oldest;
END
$$;
