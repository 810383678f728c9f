-- 0160_inbound_messages_hot_updates.sql: processing changes an inbox row
-- twice (processing, then done) and no index of inbound_messages reads a
-- column those changes write, so PostgreSQL makes both heap-only updates
-- (HOT): a new row version on the same page and no index entry. That needs
-- free room on the page (fillfactor 60) and no index naming state or
-- done_at: the dead-letter index is keyed on dead_at instead (set exactly
-- when state is 'dead'), and the purge of processed messages walks the
-- messages that are not dead letters by received_at (a message is received
-- before it is done).

-- events: none (storage parameters and indexes)
ALTER TABLE inbound_messages SET (fillfactor = 60);
DROP INDEX inbound_messages_source_dead_idx;
CREATE INDEX inbound_messages_source_dead_idx ON inbound_messages (source_id, received_at DESC, id DESC) WHERE dead_at IS NOT NULL;
DROP INDEX inbound_messages_done_idx;
CREATE INDEX inbound_messages_purge_idx ON inbound_messages (received_at) WHERE dead_at IS NULL;
