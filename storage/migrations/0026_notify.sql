-- PostgreSQL only: triggers that NOTIFY the other processes (see
-- migrations/postgres/0026_notify.sql). SQLite has no NOTIFY; its processes
-- find each other's work by polling, as before.
SELECT 1;
