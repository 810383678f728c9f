-- 0180_health_chart_indexes.sql: the health charts read a window of each
-- inbound source's dead letters and refusals by time.
CREATE INDEX inbound_messages_source_dead_at_idx ON inbound_messages (source_id, dead_at) WHERE dead_at IS NOT NULL;
CREATE INDEX inbound_refusals_source_refused_idx ON inbound_refusals (source_id, refused_at);
