-- Whether a source records inbound.message.received for each message it
-- accepts, in the transaction that admits it (the default), so the owner's
-- endpoints can be told; an owner turns it off for a source nothing
-- subscribes to.
ALTER TABLE inbound_sources
    ADD COLUMN record_events boolean NOT NULL DEFAULT true;
