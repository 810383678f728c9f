-- 0150_webhook_pending_deliveries_index.sql: a promotion reads an
-- endpoint's oldest pending deliveries. River's own indexes serve that read
-- only by scanning every delivery job (by kind) or every pending job (by
-- state), so its cost grew with the retention window. This partial index
-- holds the pending deliveries alone, by endpoint and id: a delivery gets an
-- entry when it is inserted pending, none in any other state. It adds an
-- index to River's table and writes none of its rows.

-- events: none (an index)
CREATE INDEX standmeet_webhook_pending_idx ON river_job ((args ->> 'endpoint_id'), id)
    WHERE state = 'pending' AND kind = 'webhook.deliver';
