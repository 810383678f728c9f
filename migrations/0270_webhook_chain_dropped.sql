-- 0270_webhook_chain_dropped.sql: a delivery is available (or scheduled)
-- from its insert; none waits in River's pending state behind a window of
-- its endpoint's, so the window's counts and the index of River's pending
-- deliveries go. Dropping our own index from River's table writes none of
-- River's rows. A delivery an earlier version left pending is made
-- available through River's client when the server starts
-- (webhookdb.Store.ReleasePending).

-- events: none (delivery bookkeeping)
DROP TABLE webhook_endpoint_queues;
DROP INDEX standmeet_webhook_pending_idx;
