-- A delivery that waits for a slot held in another process asks PostgreSQL
-- for it every LeasePoll; the slot carries no mark for it.
ALTER TABLE webhook_endpoint_leases DROP COLUMN wanted;
