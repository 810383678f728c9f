-- Processed inbox messages are deleted once they are older than the event
-- retention (inbound.Service.PurgeInbox); this index finds them without
-- reading the rest of the inbox.
CREATE INDEX inbound_messages_done_idx ON inbound_messages (done_at) WHERE state = 'done';
