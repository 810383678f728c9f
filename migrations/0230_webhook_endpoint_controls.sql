-- 0230_webhook_endpoint_controls.sql: an endpoint's payload filter and its
-- signing scheme. filter is the owner's filter over the thin event (NULL:
-- every event of the subscribed types); signing says whether secret_enc
-- holds an HMAC secret ("whsec_…", v1 signatures) or an ed25519 private
-- key ("whsk_…", v1a signatures), whose public key ("whpk_…") is kept in
-- the clear to be shown, with the previous one during a rotation's grace.
ALTER TABLE webhook_endpoints
    ADD COLUMN filter jsonb CHECK (filter IS NULL OR jsonb_typeof(filter) = 'object'),
    ADD COLUMN signing text NOT NULL DEFAULT 'hmac-sha256' CHECK (signing IN ('hmac-sha256', 'ed25519')),
    ADD COLUMN public_key text,
    ADD COLUMN prev_public_key text,
    ADD CONSTRAINT webhook_endpoints_public_key CHECK ((signing = 'ed25519') = (public_key IS NOT NULL));
