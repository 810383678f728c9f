-- 0151_webhook_lanes.sql: the delivery lanes. Each server process works a
-- River queue of its own, its lane, beside the shared webhooks queue, and
-- keeps its row here alive while it runs. The fan-out puts an endpoint's
-- chain deliveries on one live lane, chosen by the endpoint, so they are
-- fetched by one process and pass the lease among themselves in memory. A
-- lane whose row has lapsed is worked by every live process until no job
-- is left in it.

-- events: none (process bookkeeping)
CREATE TABLE webhook_lanes (
    lane        text        PRIMARY KEY,
    alive_until timestamptz NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now()
);
