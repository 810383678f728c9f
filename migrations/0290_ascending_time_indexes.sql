-- 0290_ascending_time_indexes.sql: the per-owner event indexes, the
-- per-source inbox indexes and the per-source refusal index keep their
-- columns, in ascending order. A new row carries the latest time (or id)
-- of its owner or source, so in descending order it lands at the left end
-- of its group, where a full leaf splits in half: those leaves stayed half
-- empty, and every write split one twice as often. In ascending order it
-- lands at the right end, where PostgreSQL splits a leaf leaving it full.
-- The queries that read them newest first scan them backwards.

DROP INDEX events_owner_occurred_idx;
CREATE INDEX events_owner_occurred_idx ON events (owner_id, occurred_at);
DROP INDEX events_owner_type_occurred_idx;
CREATE INDEX events_owner_type_occurred_idx ON events (owner_id, type, occurred_at);
DROP INDEX inbound_messages_source_received_idx;
CREATE INDEX inbound_messages_source_received_idx ON inbound_messages (source_id, received_at, id);
DROP INDEX inbound_refusals_source_idx;
CREATE INDEX inbound_refusals_source_idx ON inbound_refusals (source_id, id);
DROP INDEX inbound_messages_source_dead_idx;
CREATE INDEX inbound_messages_source_dead_idx ON inbound_messages (source_id, received_at, id) WHERE dead_at IS NOT NULL;
