-- The instance's operator: the owner who may use River's UI at /admin/tasks,
-- which shows every owner's jobs and queues and so cannot be scoped.
ALTER TABLE owners ADD COLUMN operator boolean NOT NULL DEFAULT false;
