-- 0020_owner.sql: the owner domain — owners, sessions, API keys, throttled
-- attempts, IP bans and recovery tokens. Secrets are stored as SHA-256
-- digests (bytea), passwords as argon2id hashes. Events of this domain are
-- recorded by its use cases through the Recorder, not by triggers.

CREATE TABLE owners (
    id            uuid        PRIMARY KEY,
    email         text        NOT NULL CHECK (email <> ''),
    password_hash text        NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
-- Emails are unique without regard to case.
CREATE UNIQUE INDEX owners_email_lower_key ON owners (lower(email));
CREATE INDEX owners_created_idx ON owners (created_at, id);

CREATE TABLE owner_sessions (
    id         uuid        PRIMARY KEY,
    owner_id   uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    token_hash bytea       NOT NULL CHECK (length(token_hash) = 32),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    ip         text        NOT NULL DEFAULT '',
    user_agent text        NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX owner_sessions_token_hash_key ON owner_sessions (token_hash);
CREATE INDEX owner_sessions_owner_idx ON owner_sessions (owner_id);
CREATE INDEX owner_sessions_expires_idx ON owner_sessions (expires_at);

CREATE TABLE api_keys (
    id           uuid        PRIMARY KEY,
    owner_id     uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    name         text        NOT NULL CHECK (name <> ''),
    prefix       text        NOT NULL,
    key_hash     bytea       NOT NULL CHECK (length(key_hash) = 32),
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE UNIQUE INDEX api_keys_key_hash_key ON api_keys (key_hash);
CREATE INDEX api_keys_owner_created_idx ON api_keys (owner_id, created_at DESC, id DESC);

-- Failed logins and recovery requests, kept for the limits' windows.
CREATE TABLE auth_attempts (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        text        NOT NULL CHECK (kind IN ('login_failure', 'recovery')),
    ip          text        NOT NULL,
    email       text        NOT NULL,
    owner_id    uuid        REFERENCES owners (id) ON DELETE SET NULL,
    occurred_at timestamptz NOT NULL
);
CREATE INDEX auth_attempts_ip_idx ON auth_attempts (kind, ip, occurred_at);
CREATE INDEX auth_attempts_email_idx ON auth_attempts (kind, email, occurred_at);
CREATE INDEX auth_attempts_occurred_idx ON auth_attempts (occurred_at);

CREATE TABLE ip_bans (
    id         uuid        PRIMARY KEY,
    owner_id   uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    ip         text        NOT NULL CHECK (ip <> ''),
    reason     text        NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    -- lifted_at ends a ban early; an expired ban is closed with
    -- lifted_at = expires_at when a new one replaces it.
    lifted_at  timestamptz
);
-- At most one open ban per owner and IP.
CREATE UNIQUE INDEX ip_bans_open_key ON ip_bans (owner_id, ip) WHERE lifted_at IS NULL;
CREATE INDEX ip_bans_open_ip_idx ON ip_bans (ip, expires_at) WHERE lifted_at IS NULL;
CREATE INDEX ip_bans_owner_created_idx ON ip_bans (owner_id, created_at DESC, id DESC);

CREATE TABLE recovery_tokens (
    id         uuid        PRIMARY KEY,
    owner_id   uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    token_hash bytea       NOT NULL CHECK (length(token_hash) = 32),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE UNIQUE INDEX recovery_tokens_token_hash_key ON recovery_tokens (token_hash);
CREATE INDEX recovery_tokens_owner_idx ON recovery_tokens (owner_id);
