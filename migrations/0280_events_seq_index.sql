-- 0280_events_seq_index.sql: events.seq keeps its identity but loses its
-- unique index. No query reads it: the relay claims in seq order through
-- events_unfanned_seq_idx, and the identity alone makes seq unique. Every
-- event write, and the relay's update of every routed event, maintained it.

DROP INDEX events_seq_key;
