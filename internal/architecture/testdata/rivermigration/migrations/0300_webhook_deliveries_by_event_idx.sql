-- 0300_webhook_deliveries_by_event_idx.sql: a fixture for the architecture
-- rule "our migrations touch River's tables only as allowlisted": an index
-- added to River's table with no entry in RiverDDLAllowed.

-- events: none (an index)
CREATE INDEX standmeet_webhook_by_event_idx ON river_job ((args ->> 'event_id'), id)
    WHERE kind = 'webhook.deliver';
