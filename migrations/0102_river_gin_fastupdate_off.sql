-- 0102_river_gin_fastupdate_off.sql: River's GIN indexes on river_job.args
-- and .metadata update in place on every insert instead of through a
-- pending list. With the pending list, the insert that finds it full pays
-- for merging all of it into the index: a stall of seconds for that
-- transaction (and, for the inbound gateway, for every request of its
-- batch). In place, each insert pays a little, always. This changes a
-- storage parameter of River's indexes only, none of River's rows.

-- events: none (a storage parameter)
ALTER INDEX river_job_args_index SET (fastupdate = off);
ALTER INDEX river_job_metadata_index SET (fastupdate = off);
