-- Idempotency keys of events published through the API (events.publish):
-- the same key returns the first event while that event is kept. The key
-- goes with its event when the retention prunes it.
-- events: none (a publish records its event through the Recorder; this row only remembers the key)
CREATE TABLE event_publish_keys (
    owner_id uuid NOT NULL,
    key      text NOT NULL CHECK (key <> '' AND octet_length(key) <= 255),
    event_id uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    PRIMARY KEY (owner_id, key)
);
CREATE INDEX event_publish_keys_event_idx ON event_publish_keys (event_id);
