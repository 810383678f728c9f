-- 0101_inbound_refusals.sql: the requests an inbound source refused
-- recently (bad signature, stale, too large, disabled…), for the owner to
-- see why a sender's webhooks do not arrive. No bodies; at most the last
-- 100 per source (trimmed on every write) of the last 24 hours (purged by
-- the inbound upkeep).

-- events: none (diagnostics of refused requests, kept for a day)
CREATE TABLE inbound_refusals (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id   uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    source_id  uuid        NOT NULL REFERENCES inbound_sources (id) ON DELETE CASCADE,
    refused_at timestamptz NOT NULL,
    reason     text        NOT NULL,
    detail     text        NOT NULL
);
CREATE INDEX inbound_refusals_source_idx ON inbound_refusals (source_id, id DESC);
CREATE INDEX inbound_refusals_refused_idx ON inbound_refusals (refused_at);
