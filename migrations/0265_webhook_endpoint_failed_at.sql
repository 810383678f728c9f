-- The latest failure of an endpoint's failing streak (failing_since): new
-- deliveries cool down only once the endpoint has failed CooldownAfter or
-- more into its streak, not merely because that much time has passed since
-- one failure.
ALTER TABLE webhook_endpoints ADD COLUMN failed_at timestamptz;
