-- The SHA-256 of what a publish asked for (type, subject, data as a JSON
-- value), so a key reused for another event is refused (409) instead of
-- answered with the first event. NULL for keys claimed before it existed:
-- those are taken as the same request.
ALTER TABLE event_publish_keys
    ADD COLUMN request_sha256 bytea CHECK (length(request_sha256) = 32);
