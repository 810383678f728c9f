-- 0111_webhook_attempts_health_idx.sql: the endpoint list's health (latest
-- success and failure, the day's success rate) probes the attempt log by
-- endpoint, outcome and time. This index replaces the endpoint-only one (the
-- same number of index writes per attempt; its leading column still serves
-- the cascade from webhook_endpoints). Skipped when the attempt log is kept
-- elsewhere.
DO $$
BEGIN
    IF to_regclass('webhook_attempts') IS NOT NULL THEN
        DROP INDEX IF EXISTS webhook_attempts_endpoint_idx;
        CREATE INDEX webhook_attempts_endpoint_outcome_idx ON webhook_attempts (endpoint_id, outcome, attempted_at);
    END IF;
END
$$;
