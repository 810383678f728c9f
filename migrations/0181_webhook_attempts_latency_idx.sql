-- 0181_webhook_attempts_latency_idx.sql: the delivery charts read each
-- endpoint's attempts of a window by outcome with their latency; carrying
-- the latency in the (endpoint, outcome, time) index reads them index-only.
-- The same index still serves the endpoint list's health and the cascade
-- from webhook_endpoints. Skipped when the attempt log is kept elsewhere.
DO $$
BEGIN
    IF to_regclass('webhook_attempts') IS NOT NULL THEN
        DROP INDEX IF EXISTS webhook_attempts_endpoint_outcome_idx;
        CREATE INDEX webhook_attempts_endpoint_outcome_idx ON webhook_attempts (endpoint_id, outcome, attempted_at) INCLUDE (latency_ms);
    END IF;
END
$$;
