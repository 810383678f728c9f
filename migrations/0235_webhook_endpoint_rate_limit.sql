-- An endpoint's rate limit: at most rate_limit_per_second deliveries start
-- per second, rate_limit_burst at once after a quiet spell, across every
-- replica (NULL: no limit). rate_tat is the limiter's state, the generic
-- cell rate algorithm's theoretical arrival time: one timestamp updated by
-- the delivery that starts, so the limit costs one row and one statement
-- per delivery of a limited endpoint and nothing for the others.
ALTER TABLE webhook_endpoints
    ADD COLUMN rate_limit_per_second integer CHECK (rate_limit_per_second BETWEEN 1 AND 1000),
    ADD COLUMN rate_limit_burst integer CHECK (rate_limit_burst BETWEEN 1 AND 1000),
    ADD COLUMN rate_tat timestamptz,
    ADD CONSTRAINT webhook_endpoints_rate_burst CHECK ((rate_limit_per_second IS NULL) = (rate_limit_burst IS NULL));
