-- 0010_events.sql: the one events table (docs/design/origins.md).
--
-- owner_id has no foreign key: events are the instance's log, kept for the
-- retention window whatever happens to the rows they describe. Deleting an
-- owner cascades to its notes, whose trigger records each deletion as an
-- event of that owner in the same statement; a foreign key to owners would
-- make that deletion fail, whether it refused (the owner's events reference
-- it) or cascaded (the trigger's events reference the owner being deleted).
CREATE TABLE events (
    id            uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    -- seq orders a claim; it is never used as a cursor (a lower seq may commit later).
    seq           bigint      GENERATED ALWAYS AS IDENTITY,
    owner_id      uuid        NOT NULL,
    type          text        NOT NULL CHECK (type <> ''),
    subject       text        NOT NULL DEFAULT '',
    occurred_at   timestamptz NOT NULL DEFAULT now(),
    data          jsonb       NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(data) = 'object'),
    fanned_out_at timestamptz,
    fanout        jsonb,
    relay_attempts integer    NOT NULL DEFAULT 0,
    relay_error   text,
    poisoned_at   timestamptz
);
CREATE UNIQUE INDEX events_seq_key ON events (seq);
-- The relay's claim: un-fanned, un-poisoned events in seq order.
CREATE INDEX events_unfanned_seq_idx ON events (seq) WHERE fanned_out_at IS NULL AND poisoned_at IS NULL;
-- The retention sweep and per-owner listings.
CREATE INDEX events_occurred_at_idx ON events (occurred_at);
CREATE INDEX events_owner_occurred_idx ON events (owner_id, occurred_at DESC);
CREATE INDEX events_poisoned_idx ON events (poisoned_at) WHERE poisoned_at IS NOT NULL;
