-- 0200_webhook_endpoint_actors.sql: who created an endpoint and who last
-- changed it, as the op's caller names itself: "api_key:<id>",
-- "session:<id>", or "owner" for the owner acting without either (the
-- CLI). NULL for an endpoint created before they were recorded: an actor
-- is never guessed.
ALTER TABLE webhook_endpoints
    ADD COLUMN created_by text CHECK (created_by ~ '^(owner|(api_key|session):[0-9a-f-]{36})$'),
    ADD COLUMN updated_by text CHECK (updated_by ~ '^(owner|(api_key|session):[0-9a-f-]{36})$');
