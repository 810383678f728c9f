-- 0250_api_key_scopes.sql: the scopes an API key is limited to, as
-- fine-grained tokens are. NULL is a full key, which calls every op the
-- owner can: every key issued before scopes existed stays one. A scoped
-- key names at least one scope, each one the server knows.
ALTER TABLE api_keys
    ADD COLUMN scopes text[] CHECK (scopes IS NULL OR (cardinality(scopes) > 0
        AND scopes <@ ARRAY['read', 'publish', 'webhooks', 'inbound', 'notes']::text[]));
