-- 0050_webhooks.sql: outbound webhooks — endpoints,
-- their in-flight lease, and the per-attempt delivery log. The deliveries
-- themselves are River jobs (kind webhook.deliver, queue webhooks).

CREATE TABLE webhook_endpoints (
    id                uuid        PRIMARY KEY,
    owner_id          uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    url               text        NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
    description       text        NOT NULL DEFAULT '',
    -- globs over the Webhook-exposed event types
    event_types       text[]      NOT NULL CHECK (cardinality(event_types) > 0),
    -- "whsec_…" sealed with cryptobox, associated data = id; the previous
    -- secret stays valid until prev_secret_until after a rotation
    secret_enc        bytea       NOT NULL,
    prev_secret_enc   bytea,
    prev_secret_until timestamptz,
    -- scope source: an embed of access; NULL = the published slice. No
    -- foreign key: a deleted embed admits nothing, it does not delete the
    -- endpoint.
    embed_id          uuid,
    headers           jsonb       NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(headers) = 'object'),
    max_in_flight     smallint    NOT NULL DEFAULT 1 CHECK (max_in_flight BETWEEN 1 AND 8),
    enabled           boolean     NOT NULL DEFAULT true,
    disabled_reason   text,
    failing_since     timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
-- webhooks.list pages by id (UUIDv7, time-ordered) per owner; fan-out reads
-- an owner's enabled endpoints.
CREATE INDEX webhook_endpoints_owner_idx ON webhook_endpoints (owner_id, id);

-- The in-flight lease: one row per slot (max_in_flight of the 8 are used).
-- A delivery takes a free slot with UPDATE … RETURNING (busy_until in the
-- past) and releases it by token; no transaction is held across the POST.
-- busy_until bounds a lease whose holder died.
CREATE TABLE webhook_endpoint_leases (
    endpoint_id uuid        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    slot        smallint    NOT NULL CHECK (slot BETWEEN 0 AND 7),
    busy_until  timestamptz NOT NULL DEFAULT '-infinity',
    holder      uuid,
    taken_at    timestamptz,
    PRIMARY KEY (endpoint_id, slot)
);

-- What each run of a webhook.deliver job did, beside River's job row: the
-- receiver's status, latency, the start of its answer, or the error.
CREATE TABLE webhook_attempts (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id       bigint      NOT NULL,
    endpoint_id  uuid        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id     uuid        NOT NULL,
    attempt      integer     NOT NULL,
    outcome      text        NOT NULL CHECK (outcome IN ('completed', 'retryable', 'snoozed', 'discarded')),
    status_code  integer,
    latency_ms   integer,
    response     text        CHECK (octet_length(response) <= 1024),
    error        text,
    location     text,
    attempted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_attempts_job_idx ON webhook_attempts (job_id, id);
CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id);
CREATE INDEX webhook_attempts_attempted_at_idx ON webhook_attempts (attempted_at);
