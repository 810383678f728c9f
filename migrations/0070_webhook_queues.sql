-- An endpoint's delivery queue: deliveries beyond its window wait in
-- River's pending state; running counts the deliveries of the endpoint's
-- chain that River may run now (available or running, first run), pending
-- those waiting (an upper bound: Promote corrects it when it finds fewer),
-- last_joined whether the last fan-out's delivery went in available. The row
-- is the lock that orders the fan-out's decision (available or pending)
-- against the finishing delivery's promotion of the next pending ones. No
-- foreign key: the pending deliveries of a deleted endpoint still drain
-- (each is discarded when it runs).
CREATE TABLE webhook_endpoint_queues (
    endpoint_id uuid    PRIMARY KEY,
    running     integer NOT NULL DEFAULT 0 CHECK (running >= 0),
    pending     integer NOT NULL DEFAULT 0 CHECK (pending >= 0),
    last_joined boolean NOT NULL DEFAULT true
);
