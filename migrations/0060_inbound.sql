-- 0060_inbound.sql: inbound webhooks — sources, the replay store,
-- the inbox (unique per source and message id; per source and body digest
-- when the id is not signed) and supplier connections. Processing is River
-- jobs on the inbound queue; the inbox row mirrors their state.
--
-- supplier_connections.source_id has no ON DELETE action on purpose: a
-- source in use cannot be deleted (the check runs at the end of the
-- statement, so deleting an owner still cascades through both).

-- events: none (configuration; sources record no events, their supplier connections do through Record)
CREATE TABLE inbound_sources (
    id                uuid        PRIMARY KEY,
    owner_id          uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    name              text        NOT NULL CHECK (name <> ''),
    verifier          text        NOT NULL CHECK (verifier <> ''),
    options           jsonb       NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(options) = 'object'),
    sealed_secret     bytea       NOT NULL,
    enabled           boolean     NOT NULL DEFAULT true,
    body_limit        bigint      NOT NULL CHECK (body_limit > 0),
    tolerance_seconds integer     NOT NULL CHECK (tolerance_seconds > 0),
    secret_rotated_at timestamptz NOT NULL,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);
CREATE INDEX inbound_sources_owner_created_idx ON inbound_sources (owner_id, created_at DESC, id DESC);

-- events: none (replay protection bookkeeping that expires within minutes)
CREATE TABLE inbound_replays (
    source_id      uuid        NOT NULL REFERENCES inbound_sources (id) ON DELETE CASCADE,
    message_id     text        NOT NULL,
    payload_sha256 bytea       NOT NULL CHECK (length(payload_sha256) = 32),
    registered_at  timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    PRIMARY KEY (source_id, message_id)
);
CREATE INDEX inbound_replays_expires_idx ON inbound_replays (expires_at);

-- events: none (the inbox of received webhooks; its processing is River jobs and the handlers record their own events)
CREATE TABLE inbound_messages (
    id                uuid        PRIMARY KEY,
    owner_id          uuid        NOT NULL,
    source_id         uuid        NOT NULL REFERENCES inbound_sources (id) ON DELETE CASCADE,
    message_id        text        NOT NULL CHECK (message_id <> ''),
    message_id_signed boolean     NOT NULL,
    event_type        text        NOT NULL DEFAULT '',
    payload_sha256    bytea       NOT NULL CHECK (length(payload_sha256) = 32),
    body              bytea       NOT NULL,
    headers           jsonb       NOT NULL DEFAULT '{}'::jsonb,
    signed_at         timestamptz,
    received_at       timestamptz NOT NULL,
    state             text        NOT NULL DEFAULT 'received' CHECK (state IN ('received', 'processing', 'done', 'dead')),
    attempts          integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error        text,
    last_attempt_at   timestamptz,
    next_attempt_at   timestamptz,
    done_at           timestamptz,
    dead_at           timestamptz,
    replays           integer     NOT NULL DEFAULT 0,
    job_id            bigint
);
CREATE UNIQUE INDEX inbound_messages_source_message_key ON inbound_messages (source_id, message_id);
CREATE UNIQUE INDEX inbound_messages_unsigned_body_key ON inbound_messages (source_id, payload_sha256) WHERE NOT message_id_signed;
CREATE INDEX inbound_messages_source_received_idx ON inbound_messages (source_id, received_at DESC, id DESC);
CREATE INDEX inbound_messages_source_dead_idx ON inbound_messages (source_id, received_at DESC, id DESC) WHERE state = 'dead';

-- events: none (supplier.connected/.activated/.disconnected are recorded by the supplier use cases through Record)
CREATE TABLE supplier_connections (
    id           uuid        PRIMARY KEY,
    owner_id     uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    source_id    uuid        NOT NULL REFERENCES inbound_sources (id),
    name         text        NOT NULL CHECK (name <> ''),
    supplier     text        NOT NULL DEFAULT '',
    activated_at timestamptz,
    created_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX supplier_connections_source_key ON supplier_connections (source_id);
CREATE INDEX supplier_connections_owner_created_idx ON supplier_connections (owner_id, created_at DESC, id DESC);
