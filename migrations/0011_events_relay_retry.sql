-- 0011_events_relay_retry.sql: what the relay and the admin listing need beyond 0010.
-- relay_retry_at: after a failed fan-out the relay leaves the event alone until
-- then, so the 5 attempts before poisoning are spread out rather than spent in
-- one burst.
ALTER TABLE events ADD COLUMN relay_retry_at timestamptz;
-- events.list with ?type=: an owner's events of one type, newest first.
CREATE INDEX events_owner_type_occurred_idx ON events (owner_id, type, occurred_at DESC);
