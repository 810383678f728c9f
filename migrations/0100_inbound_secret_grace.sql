-- 0100_inbound_secret_grace.sql: a rotated inbound secret keeps verifying
-- for a grace window (the previous secret and when it stops), so a sender
-- that has not switched yet is not refused. secret_rotated_at is NULL for a
-- secret never rotated, so it says whether a rotation happened: a row whose
-- secret_rotated_at equals its created_at was never rotated and is cleared.

-- events: none (configuration of inbound sources)
ALTER TABLE inbound_sources ALTER COLUMN secret_rotated_at DROP NOT NULL;
UPDATE inbound_sources SET secret_rotated_at = NULL WHERE secret_rotated_at = created_at;
ALTER TABLE inbound_sources
    ADD COLUMN previous_sealed_secret     bytea,
    ADD COLUMN previous_secret_expires_at timestamptz,
    ADD CONSTRAINT inbound_sources_previous_secret_check
        CHECK ((previous_sealed_secret IS NULL) = (previous_secret_expires_at IS NULL));
