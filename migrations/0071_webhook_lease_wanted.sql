-- A delivery of another process found the slot busy and waits for it: the
-- holder's process releases the slot to PostgreSQL at its next delivery
-- instead of passing it on in process, and its release notifies
-- standmeet_webhook_lease. Cleared by the next take.
ALTER TABLE webhook_endpoint_leases ADD COLUMN wanted boolean NOT NULL DEFAULT false;
