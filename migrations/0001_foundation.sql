-- 0001_foundation.sql: extensions and helpers every later migration may use.
CREATE EXTENSION IF NOT EXISTS pgcrypto;
