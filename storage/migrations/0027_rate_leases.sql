-- Twin of postgres/0027_rate_leases.sql, which adds the lease function
-- agentd_lease. SQLite needs no function (orgstore.LeaseRate runs the same
-- steps in one write transaction); the step keeps both dialects at the same
-- schema version, which migrate-db compares.
SELECT 1;
