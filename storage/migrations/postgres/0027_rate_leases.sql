-- Rate-limit leases (orgstore.LeaseRate): a process takes a block of a
-- key's budget in one call and admits from it in memory until the block
-- runs out or its bucket ends, then hands back what it did not use in the
-- same call that takes the next block. Same table and advisory lock class
-- as agentd_admit (0016), which this replaces; a request that finds a
-- block makes no round trip.
CREATE FUNCTION agentd_lease(p_key TEXT, p_bucket BIGINT, p_first BIGINT, p_limit INTEGER, p_want INTEGER,
	p_lock INTEGER, p_back_bucket BIGINT, p_back INTEGER)
RETURNS TABLE (granted INTEGER, used INTEGER, oldest BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_used INTEGER;
	v_oldest BIGINT;
	v_stale BIGINT;
	v_grant INTEGER;
BEGIN
	PERFORM pg_advisory_xact_lock(1634168436, p_lock);
	IF p_back > 0 THEN
		UPDATE rate_buckets b SET n = greatest(b.n - p_back, 0) WHERE b.key_id = p_key AND b.bucket = p_back_bucket;
	END IF;
	SELECT coalesce(sum(b.n) FILTER (WHERE b.bucket >= p_first), 0), min(b.bucket) FILTER (WHERE b.bucket >= p_first),
		min(b.bucket) INTO v_used, v_oldest, v_stale FROM rate_buckets b WHERE b.key_id = p_key;
	IF v_stale < p_first THEN
		DELETE FROM rate_buckets b WHERE b.key_id = p_key AND b.bucket < p_first;
	END IF;
	v_grant := least(p_want, p_limit - v_used);
	IF v_grant <= 0 THEN
		RETURN QUERY SELECT 0, v_used, v_oldest;
		RETURN;
	END IF;
	INSERT INTO rate_buckets AS b (key_id, bucket, n) VALUES (p_key, p_bucket, v_grant)
		ON CONFLICT (key_id, bucket) DO UPDATE SET n = b.n + v_grant;
	RETURN QUERY SELECT v_grant, v_used, coalesce(v_oldest, p_bucket);
END
$$;
