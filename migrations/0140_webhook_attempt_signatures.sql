-- 0140_webhook_attempt_signatures.sql: each attempt records the
-- webhook-timestamp and webhook-signature header values it sent (the
-- signatures, never the secret), so the delivery log shows the exact
-- headers of every attempt. Attempts recorded before have none. Skipped when
-- the attempt log is kept elsewhere.
DO $$
BEGIN
    IF to_regclass('webhook_attempts') IS NOT NULL THEN
        ALTER TABLE webhook_attempts
            ADD COLUMN webhook_timestamp text,
            ADD COLUMN webhook_signature text;
    END IF;
END
$$;
