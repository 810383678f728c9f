-- 0130_webhook_fanouts.sql: the fan-out's account of each event, one row
-- per event whatever the number of endpoints: the endpoints that got no
-- delivery, by reason (not subscribed, out of scope, disabled), and those
-- whose delivery waits out a failing endpoint's cooldown, until when
-- ({"reasons": {"<reason>": [endpoint ids]}, "until": …}). Written in the
-- fan-out's transaction; an event where every endpoint got its delivery now
-- has no row. It goes with its event (the retention's delete cascades).
CREATE TABLE webhook_fanouts (
    event_id    uuid        PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
    reasons     jsonb       NOT NULL CHECK (jsonb_typeof(reasons) = 'object'),
    recorded_at timestamptz NOT NULL DEFAULT now()
);
