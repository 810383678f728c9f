-- 0110_webhook_endpoint_settings.sql: per-endpoint HTTP timeout and attempts,
-- and soft delete. A deleted endpoint is disabled for good (the CHECK), so
-- every reader of enabled endpoints (the fan-out, the lease) leaves it out;
-- the retention purges it, with its delivery log, once it is older than the
-- event retention.
ALTER TABLE webhook_endpoints
    ADD COLUMN timeout_seconds smallint NOT NULL DEFAULT 10 CHECK (timeout_seconds BETWEEN 1 AND 10),
    ADD COLUMN max_attempts smallint NOT NULL DEFAULT 18 CHECK (max_attempts BETWEEN 1 AND 18),
    ADD COLUMN deleted_at timestamptz,
    ADD CONSTRAINT webhook_endpoints_deleted_disabled CHECK (deleted_at IS NULL OR NOT enabled);
-- The retention's purge of deleted endpoints.
CREATE INDEX webhook_endpoints_deleted_idx ON webhook_endpoints (deleted_at) WHERE deleted_at IS NOT NULL;
